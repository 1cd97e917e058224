package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/jsonx"
)

// checkWriteRead asserts that writeRead answers exactly as writeJSON does
// with the same envelope.
func checkWriteRead(t testing.TB, message string, r client.ReadResult) {
	slow := httptest.NewRecorder()
	writeJSON(slow, http.StatusOK, envelope{Success: true, Message: message, Data: &r})
	fast := httptest.NewRecorder()
	writeRead(fast, message, &r, nil)
	if fast.Body.String() != slow.Body.String() {
		t.Fatalf("writeRead:\n%s\nwriteJSON:\n%s", fast.Body, slow.Body)
	}
	// The same text as a literal from a host (which writes it with
	// jsonx.AppendString too), the answer's own text left empty.
	quoted := httptest.NewRecorder()
	lit := jsonx.AppendString(nil, r.Content)
	r.Content = ""
	writeRead(quoted, message, &r, lit)
	if quoted.Body.String() != slow.Body.String() {
		t.Fatalf("writeRead with the quoted text:\n%s\nwriteJSON:\n%s", quoted.Body, slow.Body)
	}
	if fast.Code != slow.Code || fast.Header().Get("Content-Type") != slow.Header().Get("Content-Type") {
		t.Fatalf("writeRead: %d %q; writeJSON: %d %q", fast.Code, fast.Header().Get("Content-Type"), slow.Code, slow.Header().Get("Content-Type"))
	}
	// Both declare their length (a JSON answer over 2 KiB used to go out
	// chunked).
	for name, w := range map[string]*httptest.ResponseRecorder{"writeRead": fast, "writeJSON": slow} {
		if got, want := w.Header().Get("Content-Length"), strconv.Itoa(w.Body.Len()); got != want {
			t.Fatalf("%s: Content-Length %q, body %s bytes", name, got, want)
		}
	}
}

func TestWriteReadMatchesWriteJSON(t *testing.T) {
	t.Parallel()
	for _, r := range []client.ReadResult{
		{},
		{Content: strings.Repeat("\tif x != \"<y>\" && z {\r\n", 300), File: "/w/a.go", Version: "sha256:00ff", TotalLines: 300},
		{Content: "ctl \x00\x1f bad \xff \u2028 é 😀", File: "/w/é \"q\".txt", TotalLines: -1},
	} {
		checkWriteRead(t, "File read successfully", r)
	}
}

func FuzzWriteRead(f *testing.F) {
	f.Add("File read successfully", "a\nb\n", "/w/a", "v", 2)
	f.Add("", "\"\\\u2029\xfe", "<&>", "", -5)
	f.Fuzz(func(t *testing.T, message, content, file, version string, lines int) {
		checkWriteRead(t, message, client.ReadResult{Content: content, File: file, Version: version, TotalLines: lines})
	})
}
