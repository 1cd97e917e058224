package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestIdleBodyDeadlineEndsWithTheBody: a handler that has read its whole
// body — and reads it again past its end, as some decoders do — may run
// longer than the body's idle bound: no deadline is set after the end, or
// net/http's own read of the connection would time out and cancel the
// request mid-work. A steady body sent in pauses shorter than the bound
// is read whole.
func TestIdleBodyDeadlineEndsWithTheBody(t *testing.T) {
	t.Parallel()
	// The parts come 25x more often than the bound, so that a loaded
	// machine's late wake-ups cannot pass for idling.
	const d = 500 * time.Millisecond
	srv := httptest.NewServer(cutIdleBodies(d, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if n, err := r.Body.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			http.Error(w, "a read past the end", http.StatusInternalServerError)
			return
		}
		time.Sleep(4 * d) // long work after the body
		if err := r.Context().Err(); err != nil {
			http.Error(w, "cancelled: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Write(b)
	})))
	defer srv.Close()
	pr, pw := io.Pipe()
	go func() {
		for i := range 5 { // 5 parts, d/25 apart
			io.WriteString(pw, strings.Repeat(string(rune('a'+i)), 10))
			time.Sleep(d / 25)
		}
		pw.Close()
	}()
	resp, err := http.Post(srv.URL, "text/plain", pr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || len(got) != 50 {
		t.Errorf("%d %q; want 200 and the 50 bytes sent", resp.StatusCode, got)
	}
}
