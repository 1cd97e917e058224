package mcpserver

import (
	"fmt"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{
		"a.go":     "package a\n\nfunc A() {}\n",
		"crlf.txt": "one\r\ntwo\r\nthree",
		"bom.txt":  "\uFEFFhi\n",
		"empty":    "",
		"bin":      "a\x00b",
		"dir/x":    "x",
	}, envOptions{})

	r := e.ok("read", args("path", "a.go"))
	v := r.out["version"].(string)
	want := "a.go — 3 lines, version " + v + "\n" +
		"     1\tpackage a\n" +
		"     2\t\n" +
		"     3\tfunc A() {}\n"
	if r.text != want {
		t.Fatalf("read text:\n%q\nwant\n%q", r.text, want)
	}
	if len(v) != 32 || r.out["total_lines"] != 3.0 || r.out["truncated"] != false || r.out["path"] != e.path("a.go") {
		t.Fatalf("structured = %v", r.out)
	}

	t.Run("range", func(t *testing.T) {
		e := e.on(t)
		r := e.ok("read", args("path", "a.go", "line_from", 2, "line_to", 3))
		wantContains(t, r.text, "a.go — lines 2-3 of 3, version ", "     2\t\n     3\tfunc A() {}\n")
		if strings.Contains(r.text, "package") {
			t.Fatal(r.text)
		}
		r = e.ok("read", args("path", "a.go", "line_from", 3, "line_to", 99))
		wantContains(t, r.text, "lines 3-3 of 3")
		if r.out["truncated"] != false {
			t.Fatal(r.out)
		}
	})
	t.Run("absolute path", func(t *testing.T) {
		e := e.on(t)
		e.ok("read", args("path", e.path("a.go")))
	})
	t.Run("crlf and bom", func(t *testing.T) {
		e := e.on(t)
		r := e.ok("read", args("path", "crlf.txt"))
		wantContains(t, r.text, "3 lines", "CRLF line endings", "     1\tone\n     2\ttwo\n     3\tthree\n")
		if strings.Contains(r.text, "\r") {
			t.Fatalf("CR shown: %q", r.text)
		}
		r = e.ok("read", args("path", "bom.txt"))
		wantContains(t, r.text, "UTF-8 BOM", "     1\thi\n")
		if strings.Contains(r.text, "\uFEFF") || r.out["bom"] != true {
			t.Fatalf("%q %v", r.text, r.out)
		}
	})
	t.Run("empty", func(t *testing.T) {
		e := e.on(t)
		wantContains(t, e.ok("read", args("path", "empty")).text, "empty — empty (0 lines), version ")
	})
	t.Run("errors", func(t *testing.T) {
		e := e.on(t)
		e.fail("read", args("path", "missing.go"), "not_found")
		e.fail("read", args("path", "dir"), "invalid_target")
		// The hint names what MCP offers, not another front's download
		// or encoding=base64.
		if r := e.fail("read", args("path", "bin"), "decode_error"); strings.Contains(r.text, "base64") || strings.Contains(r.text, "download") {
			t.Errorf("decode_error names options MCP lacks: %s", r.text)
		}
		e.fail("read", args("path", "../outside"), "outside_root")
		e.fail("read", args("path", "/etc/passwd"), "outside_root")
		e.fail("read", args("path", ""), "invalid_path")
		wantContains(t, e.fail("read", args("path", "a.go", "line_from", 9), "bad_request").text,
			"line_from 9 is past the end of a.go, which has 3 lines")
		e.fail("read", args("path", "a.go", "line_from", 3, "line_to", 2), "bad_request")
		e.fail("read", args("path", "a.go", "line_from", -1), "bad_request")
	})
}

func TestReadCaps(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	wide := strings.Repeat(strings.Repeat("x", 999)+"\n", 600) // 600 KB in 600 lines
	e := newEnv(t, map[string]string{
		"long.txt": long.String(),
		"wide.txt": wide,
		"huge.txt": "é" + strings.Repeat("y", 300<<10) + "\nnext\n",
	}, envOptions{})

	t.Run("2000 lines", func(t *testing.T) {
		e := e.on(t)
		r := e.ok("read", args("path", "long.txt"))
		wantContains(t, r.text, "long.txt — lines 1-2000 of 5000", "  2000\tline 2000\n",
			"[Truncated at the 2000-line limit per call: showing lines 1-2000 of 5000. Call read with line_from=2001 to continue.]")
		if strings.Contains(r.text, "line 2001") || r.out["next_line_from"] != 2001.0 || r.out["truncated"] != true {
			t.Fatal(r.out)
		}
		r = e.ok("read", args("path", "long.txt", "line_from", 4001))
		wantContains(t, r.text, "lines 4001-5000 of 5000", "  5000\tline 5000\n")
		if r.out["truncated"] != false || strings.Contains(r.text, "Truncated") {
			t.Fatal(r.text[len(r.text)-200:])
		}
		// An explicit range within the cap is not truncated.
		r = e.ok("read", args("path", "long.txt", "line_from", 10, "line_to", 20))
		if r.out["truncated"] != false || r.out["line_to"] != 20.0 {
			t.Fatal(r.out)
		}
	})
	t.Run("256 KiB", func(t *testing.T) {
		e := e.on(t)
		r := e.ok("read", args("path", "wide.txt"))
		// Each numbered line is 6+1+999+1 bytes: 260 fit in 256 KiB.
		wantContains(t, r.text, "lines 1-260 of 600", "[Truncated at the 256 KiB limit per call: showing lines 1-260 of 600. Call read with line_from=261 to continue.]")
		if len(r.text) > readMaxBytes+1024 {
			t.Fatalf("%d bytes", len(r.text))
		}
	})
	t.Run("one line over 256 KiB", func(t *testing.T) {
		e := e.on(t)
		r := e.ok("read", args("path", "huge.txt"))
		wantContains(t, r.text, "[Line 1 is longer than 256 KiB and was cut. Call read with line_from=2 to continue.]")
		if r.out["next_line_from"] != 2.0 || len(r.text) > readMaxBytes+1024 {
			t.Fatal(r.out)
		}
		wantContains(t, e.ok("read", args("path", "huge.txt", "line_from", 2)).text, "     2\tnext\n")
	})
}
