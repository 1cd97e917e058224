package main

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/applytest"
	"github.com/fsplane/fsplane/internal/testenv"
)

// binaryTree is the files TestGrepBinaryMatchesRipgrep searches: NUL
// bytes in ripgrep's first 64 KiB (prefix.txt), past them after a match
// (late.txt; match-nul.txt, where the NUL is in a matching line) or
// before any (nomatch.txt), in the first 3 bytes rg reads on their own
// (peek.txt), after a byte order mark (bom.txt), between two matches on
// one line (nulbreak.bin), in context before a match (nul-before.txt),
// after a lone CR (lonecr/, crfill/: rg's fills end at LFs only), near
// a multiline match (mlctx/: in context, adjacent/: in a match on the
// line after it, block/: in two matches on adjacent lines).
func binaryTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	testenv.WriteTree(t, dir, map[string]string{
		"walk/prefix.txt":    "needle 1\nx\x00y\nneedle 2\n",
		"walk/late.txt":      "needle 1\n" + testenv.PadLines(7000) + "needle 2\n\x00\nneedle 3\n",
		"walk/nomatch.txt":   testenv.PadLines(7000) + "\x00\nneedle 1\n",
		"walk/peek.txt":      "n\nneedle 1\n\x00\n",
		"walk/bom.txt":       "\ufeffneedle 1\n" + testenv.PadLines(7000) + "\x00\n",
		"walk/text.txt":      "needle text\n",
		"walk/match-nul.txt": "needle 1\n" + testenv.PadLines(7000) + "needle \x00 2\nneedle 3\n",
		"named/nulbreak.bin": "needle\x00needle\n",
		"ctx/nul-before.txt": "needle 1\n" + testenv.PadLines(7000) + "x\x00\nneedle 2\n",
		"lonecr/f.txt":       "a\rb\n" + testenv.PadLines(6552) + "needle\npad pad pad\n" + strings.Repeat("pad\n", 1000) + "\x00\n",
		"crfill/f.txt":       testenv.PadLines(6552) + "12345678needle\rzzz\n" + strings.Repeat("pad\n", 10) + "\x00\n",
		"mlctx/after.txt":    testenv.PadLines(6600) + "foo\nbar\nx\x00\n",
		"mlctx/before.txt":   testenv.PadLines(6600) + "x\x00\nfoo\nbar\n",
		"adjacent/f.txt":     testenv.PadLines(6600) + "foo\nbar\nfoo\x00bar\n",
		"block/f.txt":        testenv.PadLines(6600) + "foo bar\nzz\nfoo\x00bar\nfoo\x00bar\n",
	})
	return dir
}

// warning and binaryMatches are rg's notes on a binary file.
func warning(path string, offset int) string {
	return fmt.Sprintf("%s: WARNING: stopped searching binary file after match (found \"\\0\" byte around offset %d)\n", path, offset)
}

func binaryMatches(path string, offset int) string {
	return fmt.Sprintf("%s: binary file matches (found \"\\0\" byte around offset %d)\n", path, offset)
}

// TestGrepBinaryMatchesRipgrep: fsplane grep treats binary files as rg
// (13, with its defaults) does, byte for byte on stdout and in the exit
// status: a file met while walking is skipped for a NUL byte in rg's first
// 64 KiB (or its first 3 bytes, which it reads on their own when they
// hold a line break), searched up to the buffer fill that brings a later
// one and followed by rg's warning, and left out by -c; a file named is
// searched, NUL bytes read as line breaks when rg reads it (a directory
// among the PATHs, more than 10 PATHs, a byte order mark) and as bytes
// when it maps it into memory (otherwise), up to the first line to show
// that holds one. Each case's output is checked against the one written
// here and, where ripgrep 13 is installed, against rg's.
func TestGrepBinaryMatchesRipgrep(t *testing.T) {
	t.Parallel()
	dir := binaryTree(t)
	rg := ripgrep13(t)
	eleven := []string{"walk/match-nul.txt", "walk/late.txt", "walk/text.txt", "walk/prefix.txt", "walk/peek.txt",
		"walk/bom.txt", "walk/nomatch.txt", "named/nulbreak.bin", "walk/text.txt", "walk/text.txt", "walk/text.txt"}
	tests := []struct {
		name string
		args []string
		out  string
		exit int
	}{
		{"walked", []string{"needle", "walk"},
			"walk/bom.txt:1:needle 1\n" + warning("walk/bom.txt", 70009) +
				"walk/late.txt:1:needle 1\n" + warning("walk/late.txt", 70018) +
				"walk/match-nul.txt:1:needle 1\n" + warning("walk/match-nul.txt", 70016) +
				"walk/text.txt:1:needle text\n", 0},
		{"walked, count leaves stopped files out", []string{"-c", "needle", "walk"}, "walk/text.txt:1\n", 0},
		{"walked, files with a match before the NUL", []string{"-l", "needle", "walk"},
			"walk/bom.txt\nwalk/late.txt\nwalk/match-nul.txt\nwalk/text.txt\n", 0},
		{"named, read, the first 3 bytes read alone", []string{"-e", "needle", "-e", "^n$", "walk/peek.txt", "walk/text.txt", "named"},
			"walk/peek.txt:1:n\n" + binaryMatches("walk/peek.txt", 11) + "walk/text.txt:1:needle text\n", 0},
		{"walked, the first 3 bytes read alone", []string{"-e", "^n$", "walk"}, "walk/peek.txt:1:n\n" + warning("walk/peek.txt", 11), 0},
		{"walked, context", []string{"-C", "1", "needle", "walk"},
			"walk/bom.txt:1:needle 1\nwalk/bom.txt-2-pad 00000\n" + warning("walk/bom.txt", 70009) +
				"--\nwalk/late.txt:1:needle 1\nwalk/late.txt-2-pad 00000\n" + warning("walk/late.txt", 70018) +
				"--\nwalk/match-nul.txt:1:needle 1\nwalk/match-nul.txt-2-pad 00000\n" + warning("walk/match-nul.txt", 70016) +
				"--\nwalk/text.txt:1:needle text\n", 0},
		{"walked, multiline: searched whole", []string{"-U", `needle\s\d$`, "walk"},
			"walk/bom.txt:1:needle 1\nwalk/late.txt:1:needle 1\nwalk/late.txt:7002:needle 2\nwalk/late.txt:7004:needle 3\n" +
				"walk/match-nul.txt:1:needle 1\nwalk/match-nul.txt:7003:needle 3\nwalk/nomatch.txt:7002:needle 1\n", 0},
		{"walked, nothing before the NUL", []string{"-g", "nomatch.txt", "needle", "walk"}, "", 1},
		{"named, mapped, NUL early", []string{"needle", "walk/prefix.txt"}, binaryMatches("walk/prefix.txt", 10), 0},
		{"named, mapped, NUL on no line shown", []string{"needle", "walk/late.txt", "walk/nomatch.txt"},
			"walk/late.txt:1:needle 1\nwalk/late.txt:7002:needle 2\nwalk/late.txt:7004:needle 3\nwalk/nomatch.txt:7002:needle 1\n", 0},
		{"named, mapped, NUL in a match", []string{"needle", "walk/match-nul.txt"},
			"walk/match-nul.txt:1:needle 1\n" + binaryMatches("walk/match-nul.txt", 70016), 0},
		{"named, read", []string{"needle", "walk/late.txt", "walk/match-nul.txt", "named"},
			"walk/late.txt:1:needle 1\n" + binaryMatches("walk/late.txt", 70018) +
				"walk/match-nul.txt:1:needle 1\n" + binaryMatches("walk/match-nul.txt", 70016), 0},
		{"named, a byte order mark: read", []string{"needle", "walk/bom.txt"},
			"walk/bom.txt:1:needle 1\n" + binaryMatches("walk/bom.txt", 70009), 0},
		{"named, mapped, count: a NUL is a byte", []string{"-c", "needle", "named/nulbreak.bin"}, "named/nulbreak.bin:1\n", 0},
		{"named, read, count: a NUL is a line break", []string{"-c", "needle", "named/nulbreak.bin", "named"}, "named/nulbreak.bin:2\n", 0},
		{"named, files with matches", []string{"-l", "needle", "walk/prefix.txt"}, "walk/prefix.txt\n", 0},
		{"named, mapped, context", []string{"-C", "1", "needle", "walk/match-nul.txt", "walk/prefix.txt"},
			"walk/match-nul.txt:1:needle 1\nwalk/match-nul.txt-2-pad 00000\n--\nwalk/match-nul.txt-7001-pad 06999\n" +
				binaryMatches("walk/match-nul.txt", 70016) + binaryMatches("walk/prefix.txt", 10), 0},
		{"named, mapped, NUL in context before", []string{"-B", "2", "needle", "ctx/nul-before.txt"},
			"ctx/nul-before.txt:1:needle 1\n--\nctx/nul-before.txt-7001-pad 06999\n" + binaryMatches("ctx/nul-before.txt", 70010), 0},
		{"walked, NUL in context before", []string{"-B", "2", "needle", "ctx"},
			"ctx/nul-before.txt:1:needle 1\n" + warning("ctx/nul-before.txt", 70010), 0},
		{"named, context before a binary file's first match", []string{"-C", "1", "needle", "named/nulbreak.bin"},
			binaryMatches("named/nulbreak.bin", 6), 0},
		{"more than 10 named: read", append([]string{"-B", "1", "needle"}, eleven...),
			"walk/match-nul.txt:1:needle 1\n--\n" + binaryMatches("walk/match-nul.txt", 70016) +
				"--\nwalk/late.txt:1:needle 1\n--\n" + binaryMatches("walk/late.txt", 70018) +
				"--\nwalk/text.txt:1:needle text\n" + binaryMatches("walk/prefix.txt", 10) +
				"--\nwalk/bom.txt:1:needle 1\n" + binaryMatches("walk/bom.txt", 70009) + binaryMatches("named/nulbreak.bin", 6) +
				strings.Repeat("--\nwalk/text.txt:1:needle text\n", 3), 0},
		// rg numbers lines by LF only, fsplane a lone CR too: -l shows
		// that the match after one is found all the same.
		{"walked, a lone CR before a match", []string{"-l", "needle", "lonecr"}, "lonecr/f.txt\n", 0},
		{"walked, a lone CR where rg's fill ends, context after", []string{"-A1", "needle", "crfill"}, "", 1},
		{"walked, a lone CR where rg's fill ends, context before", []string{"-B1", "needle", "crfill"}, "", 1},
		{"walked, multiline, count: NUL in context after", []string{"-U", "--multiline-dotall", "-A1", "-c", "foo.*?bar", "mlctx"},
			"mlctx/before.txt:1\n", 0},
		{"walked, multiline, files: NUL in context before", []string{"-U", "--multiline-dotall", "-B1", "-l", "foo.*?bar", "mlctx"},
			"mlctx/after.txt\n", 0},
		{"named, multiline, files: NUL in context before", []string{"-U", "--multiline-dotall", "-B1", "-l", "foo.*?bar", "mlctx/before.txt"},
			"mlctx/before.txt\n", 0},
		{"walked, multiline: NUL in a match on the line after a match", []string{"-U", "--multiline-dotall", "foo.*?bar", "adjacent"}, "", 1},
		{"walked, multiline: NUL in a match on the line after a match, context before",
			[]string{"-U", "--multiline-dotall", "-B1", "foo.*?bar", "adjacent"}, "adjacent/f.txt-6600-pad 06599\n", 1},
		{"walked, multiline: the first NUL of a block of matches", []string{"-U", "--multiline-dotall", "-A1", "foo.*?bar", "block"},
			"block/f.txt:6601:foo bar\nblock/f.txt-6602-zz\n" + warning("block/f.txt", 66014), 0},
		{"named, mapped, multiline: NUL in a match on the line after a match", []string{"-U", "--multiline-dotall", "foo.*?bar", "adjacent/f.txt"},
			binaryMatches("adjacent/f.txt", 66011), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := wantGrep(t, dir, tt.args, tt.out, tt.exit)
			if rg == "" {
				return
			}
			out, exit := runRipgrepRaw(t, rg, dir, tt.args...)
			if diff := cmp.Diff(out, got.Stdout); diff != "" || got.Exit != exit {
				t.Errorf("rg %q: exit %d, fsplane %d (-rg +fsplane):\n%s", tt.args, exit, got.Exit, diff)
			}
		})
	}
}

// TestGrepBinaryKnownDifferences: where fsplane grep departs from rg on
// binary files, on purpose; each case says why. Where ripgrep 13 is
// installed, it is checked to still do what the case says it does.
func TestGrepBinaryKnownDifferences(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testenv.WriteTree(t, dir, map[string]string{
		"grow/a.txt":  "needle " + strings.Repeat("x", 100_000) + "\n",
		"grow/b.txt":  "needle 1\n" + testenv.PadLines(7000) + "\x00\n",
		"utf16/u.txt": "\xff\xfen\x00e\x00e\x00d\x00l\x00e\x00\n\x00",
	})
	rg := ripgrep13(t)
	long := "grow/a.txt:1:needle " + strings.Repeat("x", 100_000) + "\n"
	tests := []struct {
		name         string
		args         []string
		out, rgOut   string
		exit, rgExit int
	}{
		// rg grows its line buffer to hold a line longer than 64 KiB, and
		// keeps it grown for the files its thread searches next: there, a
		// NUL byte up to the buffer's new size is in its first fill, and
		// the file is skipped. Which files a thread searches after which
		// is the scheduler's, so fsplane takes each file as rg takes it
		// with a fresh buffer (as rg does b.txt searched alone).
		{name: "a line longer than 64 KiB in an earlier file", args: []string{"needle", "grow"},
			out: long + "grow/b.txt:1:needle 1\n" + warning("grow/b.txt", 70009), rgOut: long},
		// rg decodes a file with a UTF-16 byte order mark into UTF-8 and
		// searches the text; fsplane searches bytes (rg -E is refused),
		// so the NUL bytes of UTF-16 make the file binary.
		{name: "UTF-16", args: []string{"needle", "utf16"}, exit: 1, rgOut: "utf16/u.txt:1:needle\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantGrep(t, dir, tt.args, tt.out, tt.exit)
			if rg == "" {
				return
			}
			out, exit := runRipgrepRaw(t, rg, dir, tt.args...)
			if diff := cmp.Diff(tt.rgOut, out); diff != "" || exit != tt.rgExit {
				t.Errorf("rg %q no longer differs as written: exit %d, want %d (-want +got):\n%s", tt.args, exit, tt.rgExit, diff)
			}
		})
	}
}

// wantGrep runs fsplane grep args in dir and checks its standard output
// and exit status; it returns what it got.
func wantGrep(t *testing.T, dir string, args []string, out string, exit int) applytest.Outcome {
	t.Helper()
	got := runBinary(t, dir, "", append([]string{"grep"}, args...)...)
	if diff := cmp.Diff(out, got.Stdout); diff != "" || got.Exit != exit {
		t.Errorf("fsplane grep %q: exit %d, want %d (-want +got):\n%s\nstderr: %s", args, got.Exit, exit, diff, got.Stderr)
	}
	return got
}

// ripgrep13 is the path of rg when it is ripgrep 13, whose binary file
// handling the tests compare with; "" (and a log line) otherwise.
func ripgrep13(t *testing.T) string {
	t.Helper()
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Log("rg not installed: not compared with ripgrep")
		return ""
	}
	out, err := exec.Command(rg, "--version").Output()
	if err != nil || !bytes.HasPrefix(out, []byte("ripgrep 13.")) {
		t.Logf("rg is not ripgrep 13 (%q, %v): not compared", bytes.SplitN(out, []byte("\n"), 2)[0], err)
		return ""
	}
	return rg
}

// runRipgrepRaw runs rg in dir with the flags that make its output
// fsplane grep's (line numbers, paths on every line, path order) and
// returns its standard output as it is, and its exit status.
func runRipgrepRaw(t *testing.T, rg, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(rg, append([]string{"--no-config", "-n", "-H", "--no-heading", "--sort", "path"}, args...)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	case err != nil:
		t.Fatalf("rg %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), 0
}
