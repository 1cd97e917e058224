package transfer

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/testenv"
	"github.com/fsplane/fsplane/internal/workspace"
)

// archiveListing is what a tree archive holds, read to its end: its
// regular files with their content, its other members by type, and the
// skipped note its last member carries, if any.
type archiveListing struct {
	files   map[string]string
	others  map[string]byte
	count   string // FSPLANE.skipped.count
	skipped []Skipped
}

// listArchive reads archive with archive/tar to its end-of-archive
// blocks, failing t when it is cut or malformed.
func listArchive(t *testing.T, archive []byte) archiveListing {
	t.Helper()
	out := archiveListing{files: map[string]string{}, others: map[string]byte{}}
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading the archive: %v", err)
		}
		_, note := hdr.PAXRecords["FSPLANE.skipped.count"]
		switch {
		case hdr.Typeflag == tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			out.files[hdr.Name] = string(b)
		case note:
			if hdr.Name != "./" || hdr.Typeflag != tar.TypeDir {
				t.Errorf("the note is member %q of type %q, want the top, ./, a directory", hdr.Name, hdr.Typeflag)
			}
			out.count = hdr.PAXRecords["FSPLANE.skipped.count"]
			if err := json.Unmarshal([]byte(hdr.PAXRecords["FSPLANE.skipped"]), &out.skipped); err != nil {
				t.Fatalf("FSPLANE.skipped %q: %v", hdr.PAXRecords["FSPLANE.skipped"], err)
			}
		default:
			out.others[hdr.Name] = hdr.Typeflag
		}
	}
	// The end-of-archive blocks are there: archive/tar takes an input
	// that stops where a header would start for the end, too.
	if n := len(archive); n < 1024 || !bytes.Equal(archive[n-1024:], make([]byte, 1024)) {
		t.Fatal("the archive does not end with its end-of-archive blocks")
	}
	return out
}

// openFault is the error workspace.WalkTree's open gives for errno on
// name.
func openFault(name string, errno syscall.Errno) error {
	return fserr.FromOS("tree", name, &fs.PathError{Op: "openat", Path: name, Err: errno})
}

// observed is a writer that is a SkipObserver.
type observed struct {
	bytes.Buffer
	skips []Skipped
}

func (o *observed) TreeEntrySkipped(s Skipped) { o.skips = append(o.skips, s) }

// skipTree writes the tree the skip tests archive under root/t and
// opens a workspace over root.
func skipTree(t *testing.T, files map[string]string) (*workspace.Workspace, string) {
	t.Helper()
	root := t.TempDir()
	testenv.WriteTree(t, filepath.Join(root, "t"), files)
	ws, err := workspace.Open(workspace.Options{Roots: []string{root}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws, filepath.Join(root, "t")
}

// TestWriteTreeOpenFailures: what a tree archive does when a regular
// file cannot be opened, for each kind of failure (injected: root opens
// every file). A failure of the file's own (permission, I/O, a link
// swapped in that leads out of the root) leaves that file out, nothing
// of it written, and the rest of the tree follows in a whole archive
// whose last member notes it; it used to cut the stream there. A file
// removed meanwhile is no longer part of the tree: left out, no note. A
// shortage of the server's (out of file descriptors or memory) would
// leave out every later file too: the stream is cut, as before, so the
// client sees a truncated archive and may retry.
func TestWriteTreeOpenFailures(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.txt": "a\n", "b/bad": "bad\n", "b/c.txt": "c\n", "z.txt": "z\n"}
	rest := map[string]string{"a.txt": "a\n", "b/c.txt": "c\n", "z.txt": "z\n"}
	for _, tc := range []struct {
		name      string
		errno     syscall.Errno
		cut       bool
		wantFiles map[string]string
		wantSkips []Skipped
	}{
		{"permission denied", syscall.EACCES, false, rest, []Skipped{{"b/bad", fserr.PermissionDenied, "permission denied"}}},
		{"operation not permitted", syscall.EPERM, false, rest, []Skipped{{"b/bad", fserr.PermissionDenied, "permission denied"}}},
		{"io error", syscall.EIO, false, rest, []Skipped{{"b/bad", fserr.IOError, syscall.EIO.Error()}}},
		{"too many links", syscall.ELOOP, false, rest, []Skipped{{"b/bad", fserr.InvalidPath, "too many levels of symbolic links"}}},
		{"removed meanwhile", syscall.ENOENT, false, rest, nil},
		{"out of file descriptors", syscall.EMFILE, true, nil, nil},
		{"file table full", syscall.ENFILE, true, nil, nil},
		{"out of memory", syscall.ENOMEM, true, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws, dir := skipTree(t, files)
			var w observed
			_, err := writeTree(&w, ws, dir, treeOptions{fault: func(name string) error {
				if name == "b/bad" {
					return openFault(name, tc.errno)
				}
				return nil
			}})
			if tc.cut {
				if err == nil {
					t.Fatal("the stream went on past a shortage of the server's")
				}
				if bytes.HasSuffix(w.Bytes(), make([]byte, 1024)) {
					t.Error("the cut archive ends like a whole one")
				}
				return
			}
			if err != nil {
				t.Fatalf("WriteTree: %v", err)
			}
			got := listArchive(t, w.Bytes())
			if diff := cmp.Diff(tc.wantFiles, got.files); diff != "" {
				t.Errorf("files archived (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSkips, got.skipped); diff != "" {
				t.Errorf("note (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSkips, w.skips); diff != "" {
				t.Errorf("observed (-want +got):\n%s", diff)
			}
			if want := strconv.Itoa(len(tc.wantSkips)); len(tc.wantSkips) > 0 && got.count != want {
				t.Errorf("count %q, want %q", got.count, want)
			}
			// A tree upload takes the archive, note and all.
			if _, err := Extract(bytes.NewReader(w.Bytes()), &memSink{t: t, entries: map[string]string{}}, DefaultLimits); err != nil {
				t.Errorf("extracting the archive: %v", err)
			}
		})
	}
}

// TestWriteTreeSkippedNoteBounded: however many files are left out, the
// note stays within its budget (archive/tar reads no PAX header over
// 1 MiB): its list holds the first ones in archive order, its count all
// of them, and the observer hears of all of them.
func TestWriteTreeSkippedNoteBounded(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 40 {
		files["d/"+strings.Repeat("n", 100)+strconv.Itoa(100+i)] = "x"
	}
	files["ok.txt"] = "ok\n"
	// The budget that holds the first ten entries as JSON: the brackets,
	// then each with its comma.
	ten := len("[]")
	for i := range 10 {
		j, err := json.Marshal(Skipped{"d/" + strings.Repeat("n", 100) + strconv.Itoa(100+i), fserr.PermissionDenied, "permission denied"})
		if err != nil {
			t.Fatal(err)
		}
		ten += len(j) + 1
	}
	for _, tc := range []struct {
		name       string
		budget     int
		wantListed int
	}{
		{"all fit", 0, 40},
		{"ten fit", ten, 10},
		{"ten and a bit fit", ten + 50, 10},
		{"none fits", 10, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws, dir := skipTree(t, files)
			var w observed
			_, err := writeTree(&w, ws, dir, treeOptions{noteBudget: tc.budget, fault: func(name string) error {
				if strings.HasPrefix(name, "d/") {
					return openFault(name, syscall.EACCES)
				}
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			got := listArchive(t, w.Bytes())
			if got.count != "40" || len(got.skipped) != tc.wantListed || len(w.skips) != 40 {
				t.Fatalf("count %q, %d listed, %d observed; want 40, %d, 40", got.count, len(got.skipped), len(w.skips), tc.wantListed)
			}
			for i, s := range got.skipped {
				if want := "d/" + strings.Repeat("n", 100) + strconv.Itoa(100+i); s.Path != want {
					t.Errorf("listed[%d] = %q, want %q", i, s.Path, want)
				}
			}
			if diff := cmp.Diff(map[string]string{"ok.txt": "ok\n"}, got.files); diff != "" {
				t.Errorf("files archived (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteTreeSkippedGNUTar: GNU tar lists and extracts an archive with
// a note without complaint, and the note makes no file.
func TestWriteTreeSkippedGNUTar(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("tar"); err != nil {
		t.Skip("no tar")
	}
	if out, err := exec.Command("tar", "--version").Output(); err != nil || !bytes.Contains(out, []byte("GNU tar")) {
		t.Skip("tar is not GNU tar")
	}
	w := archiveWithoutBad(t)
	out := t.TempDir()
	cmd := exec.Command("tar", "-xvf", "-", "-C", out)
	cmd.Stdin = bytes.NewReader(w.Bytes())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tar -x: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if got := stdout.String(); got != "a.txt\n./\n" {
		t.Errorf("tar -xv printed %q, want %q", got, "a.txt\n./\n")
	}
	// The note is seen: GNU tar names its records.
	if !strings.Contains(stderr.String(), "FSPLANE.skipped") {
		t.Errorf("tar -x said %q, want a warning naming FSPLANE.skipped", stderr.String())
	}
	if b, err := os.ReadFile(filepath.Join(out, "a.txt")); err != nil || string(b) != "a\n" {
		t.Errorf("extracted a.txt: %q, %v", b, err)
	}
}

// TestWriteTreeSkippedPython: Python's tarfile reads an archive with the
// note to its end, the note's records in the top's pax_headers. A PAX
// global header as the last member made it refuse the whole archive
// ("end of file header").
func TestWriteTreeSkippedPython(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	w := archiveWithoutBad(t)
	const script = `
import sys, tarfile
with tarfile.open(fileobj=sys.stdin.buffer, mode="r|") as t:
    for m in t:
        print(m.name, m.type.decode(), m.pax_headers.get("FSPLANE.skipped.count", "-"))
`
	cmd := exec.Command("python3", "-c", script)
	cmd.Stdin = bytes.NewReader(w.Bytes())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 tarfile: %v\n%s", err, out)
	}
	if want := "a.txt 0 -\n. 5 1\n"; string(out) != want {
		t.Errorf("python3 tarfile listed %q, want %q", out, want)
	}
}

// archiveWithoutBad archives a tree of a.txt and bad, which cannot be
// opened (EACCES): a.txt, then the note naming bad.
func archiveWithoutBad(t *testing.T) *bytes.Buffer {
	t.Helper()
	ws, dir := skipTree(t, map[string]string{"a.txt": "a\n", "bad": "x\n"})
	var w bytes.Buffer
	if _, err := writeTree(&w, ws, dir, treeOptions{fault: func(name string) error {
		if name == "bad" {
			return openFault(name, syscall.EACCES)
		}
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	return &w
}
