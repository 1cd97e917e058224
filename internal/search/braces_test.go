package search

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpandBraces(t *testing.T) {
	t.Parallel()
	tests := []struct {
		glob string
		want []string
		err  string
	}{
		{"*.go", []string{"*.go"}, ""},
		{"*.{txt,log}", []string{"*.txt", "*.log"}, ""},
		{"{a,d}/**", []string{"a/**", "d/**"}, ""},
		{"{a,{b,c}d}x", []string{"ax", "bdx", "cdx"}, ""},
		{"{a,b}{1,2}", []string{"a1", "a2", "b1", "b2"}, ""},
		{"*.{,txt}", []string{"*.", "*.txt"}, ""},
		{`\{a,b}`, []string{`\{a,b}`}, ""},
		{`{a\,b,c}`, []string{`a\,b`, "c"}, ""},
		{`{a\},b}`, []string{`a\}`, "b"}, ""},
		{"[{]x", []string{"[{]x"}, ""},
		{"[]{]{a,b}", []string{"[]{]a", "[]{]b"}, ""},
		{"a}b,c", []string{"a}b,c"}, ""},
		{"*.{txt", nil, `unclosed "{"`},
		{"{a,{b}", nil, `unclosed "{"`},
		{strings.Repeat("{a,b}", 11), nil, "more than 1024 alternatives"},
	}
	for _, tt := range tests {
		got, err := expandBraces(tt.glob)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("expandBraces(%q) = %q, %v; want error %q", tt.glob, got, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("expandBraces(%q): %v", tt.glob, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("expandBraces(%q) (-want +got):\n%s", tt.glob, diff)
		}
	}
}

// TestGlobAlternatives: {a,b} in -g globs, include and exclude selects
// as ripgrep's globs do; a malformed one is an error naming its option.
func TestGlobAlternatives(t *testing.T) {
	t.Parallel()
	dir := makeTree(t, map[string]string{
		"a/x.txt": "foo\n", "b/y.log": "foo\n", "c/z.md": "foo\n", "d/w.txt": "foo\n", "e/{v}.txt": "foo\n",
	})
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"globs", Options{Globs: []string{"*.{txt,log}"}}, []string{"a/x.txt", "b/y.log", "d/w.txt", "e/{v}.txt"}},
		{"excluding globs", Options{Globs: []string{"!{a,d}/**"}}, []string{"b/y.log", "c/z.md", "e/{v}.txt"}},
		{"include", Options{Include: []string{"{a,c}/*"}}, []string{"a/x.txt", "c/z.md"}},
		{"exclude", Options{Exclude: []string{"*.{md,log}"}}, []string{"a/x.txt", "d/w.txt", "e/{v}.txt"}},
		{"escaped", Options{Include: []string{`\{v\}.txt`}}, []string{"e/{v}.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, listFiles(t, dir, ".", tt.opts)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for field, opts := range map[string]Options{
		"glob":    {Pattern: "x", Globs: []string{"*.{txt"}},
		"include": {Pattern: "x", Include: []string{"{a,b"}},
		"exclude": {Pattern: "x", Exclude: []string{"{a,b"}},
	} {
		_, err := Compile(opts)
		var ie *InvalidError
		if !errors.As(err, &ie) || ie.Field != field || !strings.Contains(ie.Message, `unclosed "{"`) || ie.Hint == "" {
			t.Errorf("Compile(%+v) = %v, want an InvalidError for %s with a hint", opts, err, field)
		}
	}
}

// TestGlobMalformedClass: a -g glob (or include/exclude) with a class
// that never closes is refused, as rg refuses it, instead of selecting
// nothing; an escaped bracket and well-formed classes are fine.
func TestGlobMalformedClass(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		opts  Options
		field string // "" when valid
	}{
		{Options{Pattern: "x", Include: []string{"[a"}}, "include"},
		{Options{Pattern: "x", Exclude: []string{"src/[ab"}}, "exclude"},
		{Options{Pattern: "x", Globs: []string{"!*.[ch"}}, "glob"},
		{Options{Pattern: "x", Globs: []string{"[[:nope:]]"}}, "glob"},
		{Options{Pattern: "x", Globs: []string{`\[a`}}, ""},
		{Options{Pattern: "x", Globs: []string{"*.[ch]", "[!a]*", "[]]"}}, ""},
	} {
		_, err := Compile(tt.opts)
		var ie *InvalidError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("Compile(%+v) = %v, want no error", tt.opts, err)
		case tt.field != "" && (!errors.As(err, &ie) || ie.Field != tt.field || !strings.Contains(ie.Message, "character class") || ie.Hint == ""):
			t.Errorf("Compile(%+v) = %v, want an InvalidError for %s naming the class, with a hint", tt.opts, err, tt.field)
		}
	}
}

// TestAncestorIgnores: the ignore files above the root that
// ReadAncestorIgnores reads apply as ripgrep applies its parents' files.
func TestAncestorIgnores(t *testing.T) {
	t.Parallel()
	top := makeTree(t, map[string]string{
		".ignore":                       "top-ignored.txt\n",
		".gitignore":                    "outer.txt\n",
		"repo/.git/info/exclude":        "excl.txt\n",
		"repo/.gitignore":               "*.log\nsub/deep/anch.txt\n",
		"repo/sub/.gitignore":           "mid.txt\n",
		"repo/sub/deep/a.txt":           "x\n",
		"repo/sub/deep/x.log":           "x\n",
		"repo/sub/deep/anch.txt":        "x\n",
		"repo/sub/deep/excl.txt":        "x\n",
		"repo/sub/deep/mid.txt":         "x\n",
		"repo/sub/deep/outer.txt":       "x\n",
		"repo/sub/deep/top-ignored.txt": "x\n",
		"repo/nested/.git/":             "",
		"repo/nested/z.log":             "x\n",
		"plain/.gitignore":              "p.txt\n",
		"plain/sub/p.txt":               "x\n",
		"plain/sub/top-ignored.txt":     "x\n",
	})
	top, err := filepath.EvalSymlinks(top)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir, start string
		want       []string
	}{
		{"repo/sub/deep", ".", []string{"a.txt", "outer.txt"}},
		{"repo/sub", "deep", []string{"a.txt", "outer.txt"}},
		{"repo/nested", ".", []string{"z.log"}},
		{"plain/sub", ".", []string{"p.txt"}},
		{"repo", "sub/deep", []string{"a.txt", "outer.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.dir+"+"+tt.start, func(t *testing.T) {
			t.Parallel()
			root := filepath.Join(top, filepath.FromSlash(tt.dir))
			opts := Options{RespectIgnore: true, Ancestors: ReadAncestorIgnores(root)}
			if diff := cmp.Diff(tt.want, listFiles(t, root, tt.start, opts)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
