package httpapi_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/httpapi"
	"github.com/fsplane/fsplane/internal/testenv"
)

// cutFiles are a tree with two files cut at a NUL byte (a.log at line
// 10,002, offset 20,009; b.log at line 5,002, offset 10,009), each with a
// match before it, one in its line and one after; one binary from the
// start, and one text.
func cutFiles() map[string]string {
	late := func(n int) string { return "needle 1\n" + strings.Repeat("x\n", n) + "\x00needle 2\nneedle 3\n" }
	return map[string]string{"logs/a.log": late(10_000), "logs/b.log": late(5_000), "logs/bin.dat": "needle\x00", "logs/c.txt": "needle\n"}
}

// aioGrepKeys are the data keys of AIO's FileGrepResult.
var aioGrepKeys = []string{"files_matched", "files_searched", "files_skipped_size", "match_count", "matches", "path", "pattern", "truncated"}

// TestGrepTellsOfABinaryCut: a file searched only up to a NUL byte past
// its first 8 KiB is counted and located in v2's data
// (files_cut_binary, binary_cuts) and told in the hint, v1 and v2, with
// the line to read the rest from; v1's data keeps AIO's keys (and the
// extensions it had). read returns the lines the hint points to. An
// answer with no file cut says nothing of it.
func TestGrepTellsOfABinaryCut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, cutFiles(), httpapi.Options{})
	a, b := filepath.Join(e.root, "logs/a.log"), filepath.Join(e.root, "logs/b.log")
	tests := []struct {
		name, route, body string
		cut               float64 // files_cut_binary (v2)
		cuts              []any   // binary_cuts (v2)
		keys              []string
		hint              string
	}{
		{name: "v2, one file", route: "/v2/fs/grep", body: `{"path":"logs/a.log","pattern":"needle"}`, cut: 1,
			cuts: []any{map[string]any{"file": a, "line_number": 10_002.0, "offset": 20_009.0}},
			keys: append(slices.Clone(aioGrepKeys), "binary_cuts", "files_cut_binary"),
			hint: "1 file was searched only up to a NUL byte past its first 8 KiB, in line 10002 of " + a +
				": its lines from there on were not searched; read them (start_line 10001) or download the file to look inside"},
		{name: "v2, a tree", route: "/v2/fs/grep", body: `{"path":"logs","pattern":"needle"}`, cut: 2,
			cuts: []any{map[string]any{"file": a, "line_number": 10_002.0, "offset": 20_009.0},
				map[string]any{"file": b, "line_number": 5002.0, "offset": 10_009.0}},
			keys: append(slices.Clone(aioGrepKeys), "binary_cuts", "files_cut_binary", "files_skipped_binary"),
			hint: "1 binary file (a NUL byte in its first 8 KiB) was not searched: grep searches text; download a binary file to look inside it; " +
				"2 files were searched only up to a NUL byte past their first 8 KiB, the first in line 10002 of " + a +
				": their lines from there on were not searched; read them (start_line 10001 for that one) or download the files to look inside"},
		{name: "v1, one file: the hint only", route: "/v1/file/grep", body: `{"path":"logs/a.log","pattern":"needle"}`,
			keys: aioGrepKeys,
			hint: "1 file was searched only up to a NUL byte past its first 8 KiB, in line 10002 of " + a},
		{name: "v1, a tree", route: "/v1/file/grep", body: `{"path":"logs","pattern":"needle"}`,
			keys: append(slices.Clone(aioGrepKeys), "files_skipped_binary"),
			hint: "1 binary file (a NUL byte in its first 8 KiB) was not searched: grep searches text; download a binary file to look inside it; " +
				"2 files were searched only up to a NUL byte past their first 8 KiB, the first in line 10002 of " + a},
		{name: "v2, nothing cut", route: "/v2/fs/grep", body: `{"path":"logs/c.txt","pattern":"needle"}`, keys: aioGrepKeys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, body := e.raw("POST", tt.route, tt.body)
			data, _ := body["data"].(map[string]any)
			if status != 200 || body["success"] != true {
				t.Fatalf("%d %v", status, body)
			}
			if diff := cmp.Diff(slices.Sorted(slices.Values(tt.keys)), slices.Sorted(maps.Keys(data))); diff != "" {
				t.Errorf("data keys (-want +got):\n%s", diff)
			}
			if tt.cut > 0 && data["files_cut_binary"] != tt.cut {
				t.Errorf("files_cut_binary = %v, want %v", data["files_cut_binary"], tt.cut)
			}
			if diff := cmp.Diff(tt.cuts, data["binary_cuts"]); tt.cuts != nil && diff != "" {
				t.Errorf("binary_cuts (-want +got):\n%s", diff)
			}
			if hint := strOr(body["hint"]); !strings.HasPrefix(hint, tt.hint) || tt.hint == "" && body["hint"] != nil {
				t.Errorf("hint %q\nwant %q", hint, tt.hint)
			}
		})
	}
	t.Run("the lines the hint points to", func(t *testing.T) {
		t.Parallel()
		r, err := e.c.Read(bg, client.ReadQuery{Path: "logs/a.log", StartLine: client.Int(10_001)})
		if err != nil || r.Content != "\x00needle 2\nneedle 3\n" {
			t.Fatalf("read: %+v %v", r, err)
		}
	})
}

// TestHostGrepTellsOfABinaryCut: through the connector, the host's
// result carries the files cut at a NUL byte, with its own paths, and the
// hub's answer says so as the local route does.
func TestHostGrepTellsOfABinaryCut(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, false)
	root := t.TempDir()
	testenv.WriteTree(t, root, cutFiles())
	e.connectHostRoot(t, root, proto.Limits{})
	resp, err := http.Post(e.url+"/v2/hosts/laptop/fs/grep", "application/json", strings.NewReader(`{"path":"logs","pattern":"needle"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Data client.GrepResult
		Hint string
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %v", resp.StatusCode, err)
	}
	a := filepath.Join(root, "logs/a.log")
	want := []client.BinaryCut{{File: a, LineNumber: 10_002, Offset: 20_009}, {File: filepath.Join(root, "logs/b.log"), LineNumber: 5002, Offset: 10_009}}
	if diff := cmp.Diff(want, body.Data.BinaryCuts); diff != "" || body.Data.FilesCutBinary != 2 || body.Data.FilesSkippedBinary != 1 {
		t.Errorf("%d files cut, %d skipped; binary_cuts (-want +got):\n%s", body.Data.FilesCutBinary, body.Data.FilesSkippedBinary, diff)
	}
	if !strings.Contains(body.Hint, "2 files were searched only up to a NUL byte past their first 8 KiB, the first in line 10002 of "+a) {
		t.Errorf("hint %q", body.Hint)
	}
}

// TestV1SearchTellsOfABinaryCut: the one-file search of v1 keeps AIO's
// data (its matches before the NUL byte) and says in the hint where it
// stopped, in its own 0-based line numbers; a file searched whole gets no
// hint.
func TestV1SearchTellsOfABinaryCut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, cutFiles(), httpapi.Options{})
	tests := []struct {
		file  string
		lines []any
		hint  string
	}{
		{"logs/a.log", []any{0.0}, "the search stopped at a NUL byte in line 10001 (0-based, as line_numbers): the lines from there on were not searched; read them (start_line 10001) or download the file to look inside"},
		{"logs/c.txt", []any{0.0}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			status, body := e.raw("POST", "/v1/file/search", `{"file":"`+tt.file+`","regex":"needle"}`)
			data, _ := body["data"].(map[string]any)
			if status != 200 || body["success"] != true {
				t.Fatalf("%d %v", status, body)
			}
			if diff := cmp.Diff([]string{"file", "line_numbers", "matches"}, slices.Sorted(maps.Keys(data))); diff != "" {
				t.Errorf("data keys (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.lines, data["line_numbers"]); diff != "" {
				t.Errorf("line_numbers (-want +got):\n%s", diff)
			}
			if got := strOr(body["hint"]); got != tt.hint {
				t.Errorf("hint %q\nwant %q", got, tt.hint)
			}
		})
	}
}
