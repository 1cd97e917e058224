package httpapi_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/httpapi"
)

// TestConcurrentEditsLoseNothing runs 64 clients that each increment their
// own counter line in one shared file, guarded by expected_version. Every
// edit must either apply or be refused with 409 stale_version, and the
// final file must hold exactly the applied edits.
func TestConcurrentEditsLoseNothing(t *testing.T) {
	t.Parallel()
	const clients, attempts = 64, 8
	var initial strings.Builder
	for i := range clients {
		fmt.Fprintf(&initial, "c%02d=0\n", i)
	}
	e := newEnv(t, map[string]string{"counters.txt": initial.String()}, httpapi.Options{})
	applied := make([]int, clients)
	var other sync.Map
	var stale atomic.Int64
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			c, _ := client.New(e.srv.URL)
			for range attempts {
				r, err := c.Read(bg, client.ReadQuery{Path: "counters.txt"})
				if err != nil {
					other.Store(i, err)
					return
				}
				cur := fmt.Sprintf("c%02d=%d\n", i, applied[i])
				if !strings.Contains(r.Content, cur) {
					other.Store(i, fmt.Errorf("client %d: file lacks %q: an applied edit was lost", i, cur))
					return
				}
				next := fmt.Sprintf("c%02d=%d\n", i, applied[i]+1)
				_, err = c.Edit(bg, client.EditRequest{Command: "str_replace", Path: "counters.txt", OldStr: &cur, NewStr: &next, ExpectedVersion: r.Version})
				switch {
				case err == nil:
					applied[i]++
				case isCode(err, "stale_version"):
					stale.Add(1)
				default:
					other.Store(i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	other.Range(func(k, v any) bool {
		t.Errorf("client %v: %v", k, v)
		return true
	})
	var want strings.Builder
	total := 0
	for i := range clients {
		fmt.Fprintf(&want, "c%02d=%d\n", i, applied[i])
		total += applied[i]
	}
	if got := e.file("counters.txt"); got != want.String() {
		t.Fatalf("final file does not hold exactly the applied edits:\n got %q\nwant %q", got, want.String())
	}
	if total == 0 || int64(total)+stale.Load() != clients*attempts {
		t.Fatalf("%d applied + %d refused != %d attempts", total, stale.Load(), clients*attempts)
	}
	t.Logf("%d edits applied, %d refused with 409", total, stale.Load())
}

func isCode(err error, code string) bool {
	ce, ok := err.(*client.Error)
	return ok && ce.Code() == code && ce.Status == 409
}

// TestConcurrentChangesWithoutVersionsAllApply: clients that send no
// expected_version change distinct parts of one file at the same time
// (str_replace, insert, append). Nobody asked for a version check and
// every anchor is unique, so every request succeeds and the file holds
// every change.
func TestConcurrentChangesWithoutVersionsAllApply(t *testing.T) {
	t.Parallel()
	const n = 20
	var initial strings.Builder
	for i := range n {
		fmt.Fprintf(&initial, "k%02d\n", i)
	}
	e := newEnv(t, map[string]string{"sr.txt": initial.String()}, httpapi.Options{})
	var wg sync.WaitGroup
	errs := make([]error, 3*n)
	for i := range n {
		wg.Go(func() {
			old, repl := fmt.Sprintf("k%02d\n", i), fmt.Sprintf("K%02d\n", i)
			_, errs[i] = e.c.Edit(bg, client.EditRequest{Command: "str_replace", Path: "sr.txt", OldStr: &old, NewStr: &repl})
		})
		wg.Go(func() {
			text, top := fmt.Sprintf("i%02d", i), 0
			_, errs[n+i] = e.c.Edit(bg, client.EditRequest{Command: "insert", Path: "sr.txt", InsertLine: &top, NewStr: &text})
		})
		wg.Go(func() {
			_, errs[2*n+i] = e.c.Write(bg, client.WriteRequest{Path: "sr.txt", Content: fmt.Sprintf("a%02d\n", i), Append: true})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
	got := "\n" + e.file("sr.txt")
	for i := range n {
		for _, line := range []string{"K%02d", "i%02d", "a%02d"} {
			if want := fmt.Sprintf("\n"+line+"\n", i); strings.Count(got, want) != 1 {
				t.Errorf("%q occurs %d times in the result, want once", want[1:], strings.Count(got, want))
			}
		}
	}
}
