package fserr

import (
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestRootEscapeIsOutsideRoot: an *os.Root's refusal of a link leading
// out — what an operation meets when a link is swapped in after its own
// check — is outside_root, not an anonymous io_error (500).
func TestRootEscapeIsOutsideRoot(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, err = root.Open("out/x")
	if !IsRootEscape(err) {
		t.Fatalf("os.Root's escape error is not recognised (its text changed?): %v", err)
	}
	if e := FromOS("grep", "out/x", err); e.Code != OutsideRoot {
		t.Errorf("FromOS(%v) = %s %q, want outside_root", err, e.Code, e.Message)
	}
}

// TestStableListsEveryCode: Stable knows each Code constant, read from
// this package's source, so a code added there is not taken for a
// foreign one (the hub turns a host's foreign code into io_error).
func TestStableListsEveryCode(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(gotoken.NewFileSet(), "fserr.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != gotoken.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for _, val := range v.Values {
				code, err := strconv.Unquote(val.(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				n++
				if !Code(code).Stable() {
					t.Errorf("code %q is missing from stable", code)
				}
			}
		}
	}
	if n != len(stable) || n == 0 {
		t.Errorf("%d Code constants, %d stable codes", n, len(stable))
	}
}
