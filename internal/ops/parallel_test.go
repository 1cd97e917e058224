package ops

import (
	"context"
	"sync"
	"testing"
)

// TestParallelBracketsTreeWalks: Options.Parallel is told of every search
// that walks a directory tree, and of its end; not of a search in one
// file, which has nothing to spread over CPUs.
func TestParallelBracketsTreeWalks(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	calls, running := 0, 0
	parallel := func() (int, func()) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		running++
		return 3, func() {
			mu.Lock()
			defer mu.Unlock()
			running--
		}
	}
	e, _ := newEngine(t, map[string]string{"a.txt": "alpha\n", "d/b.txt": "alpha beta\n"}, Options{Parallel: parallel})
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		run   func() (int, error) // results found
		found int
		walks bool
	}{
		{"grep a tree", func() (int, error) {
			r, err := e.Grep(ctx, GrepRequest{Path: ".", Pattern: "alpha"})
			return r.MatchCount, err
		}, 2, true},
		{"grep one file", func() (int, error) {
			r, err := e.Grep(ctx, GrepRequest{Path: "a.txt", Pattern: "alpha"})
			return r.MatchCount, err
		}, 1, false},
		{"search one file", func() (int, error) {
			r, err := e.Search(ctx, FileSearchRequest{File: "d/b.txt", Regex: "beta"})
			return len(r.Matches), err
		}, 1, false},
		{"find", func() (int, error) {
			r, err := e.Find(ctx, FindRequest{Path: ".", Pattern: "*.txt"})
			return len(r.Files), err
		}, 2, true},
		{"glob", func() (int, error) {
			r, err := e.Glob(ctx, GlobRequest{Path: ".", Pattern: "**/*.txt"})
			return len(r.Files), err
		}, 2, true},
	} {
		mu.Lock()
		before := calls
		mu.Unlock()
		found, err := tc.run()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if found != tc.found {
			t.Errorf("%s found %d, want %d", tc.name, found, tc.found)
		}
		mu.Lock()
		told, left := calls-before, running
		mu.Unlock()
		if want := map[bool]int{true: 1, false: 0}[tc.walks]; told != want {
			t.Errorf("%s: Parallel called %d times, want %d", tc.name, told, want)
		}
		if left != 0 {
			t.Errorf("%s: %d walks not ended", tc.name, left)
		}
	}
}
