package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"

	"github.com/fsplane/fsplane/internal/connector/proto"
)

// contentRange is p's Content-Range in a file of size bytes.
func contentRange(p proto.ByteRange, size int64) string {
	return fmt.Sprintf("bytes %d-%d/%d", p.Offset, p.Offset+p.Length-1, size)
}

// byteRanges frames parts of a file of size bytes, whose bytes src yields
// one after the other, as the multipart/byteranges body http.ServeContent
// writes for several ranges: multipart.Writer's random boundary, each part
// headed with its Content-Range and Content-Type. It returns the body's
// media type, its length and the body. The body fails, rather than ends,
// when src yields fewer bytes than the parts or more, or fails; its
// closing boundary follows only src's clean end (for a host download: the
// transfer's checked end), so a body cut short never parses as whole.
func byteRanges(parts []proto.ByteRange, size int64, src io.Reader) (ctype string, n int64, body io.Reader) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	rs := make([]io.Reader, 0, 2*len(parts)+2)
	for _, p := range parts {
		// Writes to a bytes.Buffer do not fail.
		_, _ = mw.CreatePart(textproto.MIMEHeader{"Content-Range": {contentRange(p, size)}, "Content-Type": {"application/octet-stream"}})
		head := bytes.Clone(buf.Bytes())
		buf.Reset()
		rs = append(rs, bytes.NewReader(head), &exactly{r: src, n: p.Length})
		n += int64(len(head)) + p.Length
	}
	_ = mw.Close()
	rs = append(rs, ended{src}, &buf)
	return "multipart/byteranges; boundary=" + mw.Boundary(), n + int64(buf.Len()), io.MultiReader(rs...)
}

// exactly reads n bytes of r: r ending before them is
// io.ErrUnexpectedEOF.
type exactly struct {
	r io.Reader
	n int64
}

func (e *exactly) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.n {
		p = p[:e.n]
	}
	k, err := e.r.Read(p)
	e.n -= int64(k)
	if err == io.EOF && e.n > 0 {
		err = io.ErrUnexpectedEOF
	}
	return k, err
}

// errMoreBytes is a source with bytes past the parts it was to yield.
var errMoreBytes = errors.New("more bytes than the ranges asked")

// ended reads nothing but r's end: io.EOF when r ends cleanly, r's error
// when it fails, errMoreBytes when it has more bytes.
type ended struct{ r io.Reader }

func (e ended) Read([]byte) (int, error) {
	var b [1]byte
	for {
		k, err := e.r.Read(b[:])
		if k > 0 {
			return 0, errMoreBytes
		}
		if err != nil {
			return 0, err
		}
	}
}
