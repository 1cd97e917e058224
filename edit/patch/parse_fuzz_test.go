package patch

import (
	"errors"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/edit"
)

func FuzzParse(f *testing.F) {
	for _, tc := range parseCodexCases {
		f.Add(tc.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := Parse(text)
		if err != nil {
			fuzzCheckError(t, p, err)
			return
		}
		if p.Dialect != Codex {
			t.Fatalf("dialect = %v", p.Dialect)
		}
		fuzzCheckChunks(t, p)
		formatCheckRoundTrip(t, p)
	})
}

func FuzzParseAgentZero(f *testing.F) {
	for _, tc := range parseAZCases {
		f.Add(tc.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseAgentZero(text, parseAZPath)
		if err != nil {
			fuzzCheckError(t, p, err)
			return
		}
		if p.Dialect != AgentZero || len(p.Files) != 1 {
			t.Fatalf("got dialect %v with %d files", p.Dialect, len(p.Files))
		}
		if f := p.Files[0]; f.Kind != Update || f.Path != parseAZPath || f.MoveTo != "" || f.Header != strings.TrimSpace(f.Header) || (f.Header != "" && f.Line == 0) {
			t.Fatalf("file op %+v", f)
		}
		fuzzCheckChunks(t, p)
		for _, c := range p.Files[0].Chunks {
			if parseEqualLines(c.Old, c.New) {
				t.Fatalf("chunk does not change content: %+v", c)
			}
			if len(c.Old) == 0 && len(c.Anchors) == 0 {
				t.Fatalf("insert-only chunk without anchor: %+v", c)
			}
			if c.EOF {
				t.Fatalf("EOF set: %+v", c)
			}
		}
		formatCheckRoundTrip(t, p)
	})
}

func fuzzCheckError(t *testing.T, p *Patch, err error) {
	t.Helper()
	var e *edit.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T %v is not an *edit.Error", err, err)
	}
	if e.Code != edit.CodeBadRequest || e.Message == "" || e.Hint == "" {
		t.Fatalf("bad error %+v", e)
	}
	if p != nil {
		t.Fatalf("patch %+v returned with error %v", p, err)
	}
}

// fuzzCheckChunks checks what holds for every parsed patch: every Update
// has chunks, every chunk has lines, anchors are non-blank and lines hold
// no line break.
func fuzzCheckChunks(t *testing.T, p *Patch) {
	t.Helper()
	for _, f := range p.Files {
		if f.Path == "" {
			t.Fatalf("empty path: %+v", f)
		}
		if f.Kind == Update && len(f.Chunks) == 0 {
			t.Fatalf("update without chunks: %+v", f)
		}
		if f.Kind != Update && (len(f.Chunks) != 0 || f.MoveTo != "") {
			t.Fatalf("%v with chunks or move: %+v", f.Kind, f)
		}
		if f.Kind != Add && len(f.Lines) != 0 {
			t.Fatalf("%v with lines: %+v", f.Kind, f)
		}
		for _, c := range f.Chunks {
			if len(c.Old) == 0 && len(c.New) == 0 {
				t.Fatalf("empty chunk: %+v", c)
			}
			for _, a := range c.Anchors {
				if strings.TrimSpace(a) == "" {
					t.Fatalf("blank anchor in %+v", c)
				}
			}
		}
	}
}
