package gitconfig

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var lookupTests = []struct {
	name, data string
	value      string
	ok         bool
	err        string // "" for none
}{
	{"simple", "[core]\n\texcludesFile = ~/x\n", "~/x", true, ""},
	{"case-insensitive section and name", "[Core]\nExcludesFile = y\n", "y", true, ""},
	{"quotes removed, inner spaces kept, trailing dropped", "[core]\nexcludesfile = \"a b\" c  \n", "a b c", true, ""},
	{"last wins", "[core]\nexcludesfile = a\n[user]\nname = n\n[core]\nexcludesfile = b\n", "b", true, ""},
	{"subsection is another section", "[core \"sub\"]\nexcludesfile = a\n", "", false, ""},
	{"dotted subsection is another section", "[core.Sub]\nexcludesfile = a\n", "", false, ""},
	{"other section", "[user]\nexcludesfile = a\n", "", false, ""},
	{"before any section", "excludesfile = a\n", "", false, ""},
	{"without a value", "[core]\nexcludesfile\n", "", false, ""},
	{"empty value", "[core]\nexcludesfile =\n", "", true, ""},
	{"key on the header's line, comment", "[core]excludesfile=a;c\n", "a", true, ""},
	{"hash in quotes", "[core]\nexcludesfile = \"a#b\" # c\n", "a#b", true, ""},
	{"continuation", "[core]\nexcludesfile = a \\\n b\n", "a  b", true, ""},
	{"escapes", "[core]\nexcludesfile = \"a\\\\b\\\"c\\td\"\n", "a\\b\"c\td", true, ""},
	{"CRLF", "[core]\r\nexcludesfile = a\r\n", "a", true, ""},
	{"BOM, no final newline", "\ufeff[core]\nexcludesfile = a", "a", true, ""},
	{"comments and blank lines", "# c\n; d\n\n[core] # e\n  excludesfile = a ; f\n", "a", true, ""},
	{"unknown escape", "[core]\nexcludesfile = \"a\\q\"\n", "", false, "bad config line 2"},
	{"space in header", "[ core ]\nexcludesfile = a\n", "", false, "bad config line 1"},
	{"comment after a bare name", "[core]\nexcludesfile # x\n", "", false, "bad config line 2"},
	{"unterminated quote", "[core]\nexcludesfile = \"a", "", false, "bad config line 2"},
	{"error after the value", "[core]\nexcludesfile = x\n[user]\nname = \"a\n", "x", true, "bad config line 4"},
	{"subsection with escape", "[core \"a\\\"b\"]\nexcludesfile = a\n[core]\nexcludesfile=c", "c", true, ""},
	{"unterminated header", "[core", "", false, "bad config line 1"},
}

func TestLookup(t *testing.T) {
	t.Parallel()
	for _, tt := range lookupTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, ok, err := Lookup([]byte(tt.data), "core.excludesFile")
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if v != tt.value || ok != tt.ok || gotErr != tt.err {
				t.Errorf("Lookup = %q, %v, %q; want %q, %v, %q", v, ok, gotErr, tt.value, tt.ok, tt.err)
			}
		})
	}
}

// TestLookupMatchesGit checks the cases against `git config --get` where
// git is installed: the same value, unset (exit 1) or refused (exit 128).
func TestLookupMatchesGit(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	for _, tt := range lookupTests {
		if tt.name == "without a value" {
			continue // git prints "" (boolean true); a path needs a value
		}
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(f, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(git, "config", "-f", f, "--get", "core.excludesFile")
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
			var out bytes.Buffer
			cmd.Stdout = &out
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.err != "":
				if code != 128 {
					t.Errorf("git exit %d, want 128 (bad config)", code)
				}
			case !tt.ok:
				if code != 1 {
					t.Errorf("git exit %d (%q), want 1 (unset)", code, out.String())
				}
			case code != 0 || strings.TrimSuffix(out.String(), "\n") != tt.value:
				t.Errorf("git exit %d, value %q; want %q", code, out.String(), tt.value)
			}
		})
	}
}

func TestCanonicalKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"core.excludesFile":  "core.excludesfile",
		"Remote.Origin.URL":  "remote.Origin.url",
		"A.b.C.d":            "a.b.C.d",
		"nodot":              "nodot",
		"Core.ExcludesFile.": "core.ExcludesFile.",
	} {
		if got := canonicalKey(in); got != want {
			t.Errorf("canonicalKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzLookup: any text parses without panicking, an error names a line
// within the text, and a value written the way git writes one (quoted,
// escaped, after any text that parses; the blank line ends a continued
// value) reads back unchanged.
func FuzzLookup(f *testing.F) {
	for _, tt := range lookupTests {
		f.Add([]byte(tt.data), "a \"b\"\\\tc\nd")
	}
	f.Fuzz(func(t *testing.T, data []byte, v string) {
		_, _, err := Lookup(data, "core.excludesFile")
		if err != nil {
			var n int
			if _, serr := fmt.Sscanf(err.Error(), "bad config line %d", &n); serr != nil || n < 1 || n > bytes.Count(data, []byte("\n"))+2 {
				t.Fatalf("error %q: no line within the text", err)
			}
			return
		}
		written := append(append([]byte{}, data...), "\n\n[core]\n\texcludesfile = "+quote(v)+"\n"...)
		got, ok, err := Lookup(written, "core.excludesFile")
		if err != nil || !ok || got != v {
			t.Fatalf("wrote %q after %q, read %q, %v, %v", v, data, got, ok, err)
		}
	})
}

// quote writes v as git config --set writes a value.
func quote(v string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
