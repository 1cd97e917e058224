package httpapi

import (
	"errors"
	"io"
	"net/http"
	"testing"
)

// countingZeros is an endless body of zeros that counts what is read.
type countingZeros struct{ n int64 }

func (c *countingZeros) Read(p []byte) (int, error) {
	clear(p)
	c.n += int64(len(p))
	return len(p), nil
}

// TestReadBodyRefusesADeclaredOversizeUnread: a body whose Content-Length
// is over the limit is refused as too large without reading any of it
// (TestOversizedBodyIs413 has the 413 it becomes).
func TestReadBodyRefusesADeclaredOversizeUnread(t *testing.T) {
	t.Parallel()
	body := &countingZeros{}
	r, _ := http.NewRequest(http.MethodPost, "/v2/fs/write", io.LimitReader(body, maxBody+1))
	r.ContentLength = maxBody + 1
	_, err := readBody(r)
	var mbe *http.MaxBytesError
	if !errors.As(err, &mbe) {
		t.Fatalf("readBody = %v, want a MaxBytesError", err)
	}
	if body.n != 0 {
		t.Errorf("read %d bytes of a body declared over the limit; want none", body.n)
	}
}
