package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf16"

	"github.com/fsplane/fsplane/internal/transfer"
)

// A tree download (GET /v2/fs/tree) leaves out a file it cannot open and
// goes on (see transfer.WriteTree); the archive's last member notes what
// it left out. The response says so too, in HTTP trailers sent after the
// body, since the omissions are known only once the tree is walked:
//
//	Fsplane-Skipped-Count: 2
//	Fsplane-Skipped: {"path":"locked.txt","code":"permission_denied","message":"permission denied"}
//	Fsplane-Skipped: {"path":"sub/locked","code":"permission_denied","message":"permission denied"}
//
// Fsplane-Skipped-Count counts every entry left out; there is one
// Fsplane-Skipped field per entry, JSON (ASCII only) in archive order,
// for the first maxSkippedTrailers of them (the archive's note lists
// more). Neither is sent when nothing was left out. They are not
// declared in a Trailer header before the body: the tar headers go out
// with its first bytes, before the walk knows whether anything will be
// left out, so they are sent as net/http's undeclared trailers
// (TrailerPrefix), which HTTP/1.1 (chunked) and HTTP/2 carry; an
// HTTP/1.0 client, or a proxy that drops trailers, gets the archive's
// note only.

// maxSkippedTrailers bounds the Fsplane-Skipped fields of a response:
// clients bound the header and trailer bytes they take.
const maxSkippedTrailers = 100

// Trailer keys as net/http takes undeclared ones: the prefix, then the
// canonical name (a key with the prefix is not canonicalised).
const (
	skippedCountTrailer = http.TrailerPrefix + "Fsplane-Skipped-Count"
	skippedTrailer      = http.TrailerPrefix + "Fsplane-Skipped"
)

// TreeEntrySkipped makes the tree download's writer a
// transfer.SkipObserver: it counts s in the response's trailers.
func (l *lazyHeader) TreeEntrySkipped(s transfer.Skipped) {
	h := l.w.Header()
	n := 0
	if v := h[skippedCountTrailer]; len(v) == 1 {
		n, _ = strconv.Atoi(v[0])
	}
	h[skippedCountTrailer] = []string{strconv.Itoa(n + 1)}
	if n >= maxSkippedTrailers {
		return
	}
	b, err := json.Marshal(s)
	if err != nil {
		return
	}
	h[skippedTrailer] = append(h[skippedTrailer], asciiJSON(b))
}

// asciiJSON rewrites JSON text with every non-ASCII character escaped
// (\uXXXX, surrogate pairs beyond the BMP), so that it is a field value
// any HTTP client takes as is. encoding/json has already escaped control
// characters and turned invalid UTF-8 into U+FFFD.
func asciiJSON(b []byte) string {
	out := make([]byte, 0, len(b))
	for _, r := range string(b) {
		switch {
		case r < 0x80:
			out = append(out, byte(r))
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		default:
			out = fmt.Appendf(out, `\u%04x`, r)
		}
	}
	return string(out)
}
