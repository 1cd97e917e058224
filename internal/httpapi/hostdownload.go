package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/fserr"
)

// hostWriteTimeout bounds each write of a host download to its client, so
// a client that stops reading does not keep this handler forever (a slow
// one is fine: each write is at most one 64 KiB chunk). The host's
// connection, which carries every other operation on that host too, does
// not wait for the client: with flow control the host sends a download
// only as fast as its client takes it; with a host from before flow
// control the connector fails a download whose client falls behind (takes
// nothing, or under 1 MiB/s while the host sends faster, for 2 s), telling
// the host to stop sending (transfer_abort). The closed pipe then ends the
// copy, and this deadline a write to the client still waiting.
const hostWriteTimeout = 5 * time.Second

// pipeSink hands a data transfer's bytes to the HTTP handler through a
// pipe, so the response is written by the handler's own goroutine.
type pipeSink struct{ w *io.PipeWriter }

func (p pipeSink) Write(b []byte) (int, error) { return p.w.Write(b) }

func (p pipeSink) Finish(err error) {
	if err == nil {
		err = io.EOF
	}
	p.w.CloseWithError(err)
}

// hostDownload streams a file from a connected host: headers (size,
// ETag = version, Last-Modified) from the host's result, then the bytes as
// they arrive. A transfer that fails midway (the host aborts it, the
// client is too slow for the connector, or a write to the client passes
// hostWriteTimeout) cuts the response, so a
// client never takes a partial file for a whole one, nor waits for bytes
// that will not come.
//
// A single Range is answered as the local route answers it (206 with
// Content-Range, or 416 with the JSON envelope and bytes */size), If-Range
// included: the host resolves the range against the file it opened and
// sends only those bytes. A host from before ranges sends the whole file,
// and the client then gets a 200 with all of it, which HTTP allows for any
// Range. Several ranges get the whole file too (the local route answers
// them with multipart/byteranges).
func (s *Server) hostDownload(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	path := q.str("path", true)
	if q.errs != nil {
		invalid(w, q.errs)
		return
	}
	name := r.PathValue("host")
	if name == "-" {
		name = ""
	}
	remote, err := s.hub.Remote(name)
	if err != nil {
		fail(w, v2, "download", path, err)
		return
	}
	h := w.Header()
	h.Set("Accept-Ranges", "bytes")
	rng, err := requestedRange(r)
	if err != nil {
		refuseRange(w, "download", path)
		return
	}
	pr, pw := io.Pipe()
	defer pr.Close()
	res, err := remote.Download(r.Context(), proto.DownloadRequest{Path: path, Range: rng}, pipeSink{pw})
	if err != nil {
		fail(w, v2, "download", path, err)
		return
	}
	// From here a return closes the pipe, which ends the host's transfer.
	part, err := servedPart(path, rng, res)
	if err != nil {
		fail(w, v2, "download", path, err)
		return
	}
	if part != nil && part.Length == 0 {
		h.Set("Content-Range", fmt.Sprintf("bytes */%d", res.Size))
		refuseRange(w, "download", path)
		return
	}
	size, status := res.Size, http.StatusOK
	if part != nil {
		size, status = part.Length, http.StatusPartialContent
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", part.Offset, part.Offset+part.Length-1, res.Size))
	}
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	if res.Version != "" {
		h.Set("ETag", `"`+res.Version+`"`)
	}
	h.Set("Last-Modified", res.ModTime.UTC().Format(http.TimeFormat))
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		pr.CloseWithError(errors.New("HEAD request: body not wanted"))
		return
	}
	// A client that goes away ends the wait for the host's bytes too; the
	// closed pipe then fails the stream, and the host is told.
	stop := context.AfterFunc(r.Context(), func() { pr.CloseWithError(r.Context().Err()) })
	defer stop()
	n, err := copyTimed(w, pr)
	if err != nil || n != size {
		s.log.Warn("Host download cut", "path", path, "bytes", n, "of", size, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// errBadRange is a Range header the local route's http.ServeContent
// would refuse with 416 whatever the file.
var errBadRange = errors.New("invalid range")

// requestedRange is the range to ask the host for: nil when the request
// has no Range, names several ranges, or has an If-Range that cannot hold
// (a weak or malformed validator, as http.ServeContent judges it); an
// error when the Range is malformed. It parses as http.ServeContent does,
// so the two routes agree on what a header means.
func requestedRange(r *http.Request) (*proto.RangeRequest, error) {
	v := r.Header.Get("Range")
	if v == "" {
		return nil, nil
	}
	specs, ok := strings.CutPrefix(v, "bytes=")
	if !ok {
		return nil, errBadRange
	}
	var rng *proto.RangeRequest
	n := 0
	for spec := range strings.SplitSeq(specs, ",") {
		spec = textproto.TrimString(spec)
		if spec == "" {
			continue
		}
		one, err := parseRangeSpec(spec)
		if err != nil {
			return nil, err
		}
		rng, n = one, n+1
	}
	if n != 1 || !ifRange(r.Header.Get("If-Range"), rng) {
		return nil, nil
	}
	return rng, nil
}

// parseRangeSpec parses one byte range: first-last, first- or -suffix.
func parseRangeSpec(spec string) (*proto.RangeRequest, error) {
	first, last, ok := strings.Cut(spec, "-")
	if !ok {
		return nil, errBadRange
	}
	first, last = textproto.TrimString(first), textproto.TrimString(last)
	if first == "" {
		if last == "" || last[0] == '-' {
			return nil, errBadRange
		}
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return nil, errBadRange
		}
		return &proto.RangeRequest{Last: &n}, nil
	}
	a, err := strconv.ParseInt(first, 10, 64)
	if err != nil || a < 0 {
		return nil, errBadRange
	}
	rng := &proto.RangeRequest{First: &a}
	if last != "" {
		b, err := strconv.ParseInt(last, 10, 64)
		if err != nil || b < a {
			return nil, errBadRange
		}
		rng.Last = &b
	}
	return rng, nil
}

// ifRange copies an If-Range header into rng's condition, which the host
// checks against the file it opens; false when the header can never hold,
// so the whole file is asked for. As http.ServeContent: a strong ETag must
// equal the version, a weak one never matches, and a date must be the
// file's modification time to the second.
func ifRange(v string, rng *proto.RangeRequest) bool {
	v = textproto.TrimString(v)
	switch {
	case v == "":
		return true
	case strings.HasPrefix(v, "W/"):
		return false
	case strings.HasPrefix(v, `"`):
		tag, _, closed := strings.Cut(v[1:], `"`)
		if !closed || tag == "" {
			return false
		}
		rng.IfVersion = tag
		return true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return false
	}
	rng.IfModTime = &t
	return true
}

// servedPart is the part of the file res says the host sends for rng: nil
// for the whole file. A host that honours ranges sends exactly the part
// rng resolves to against the file it opened (proto.RangeRequest.Part);
// one that does not (it predates ranges) sends the whole file and says
// nothing. Anything else would put other bytes under the Content-Range
// the client trusts, and is refused.
func servedPart(path string, rng *proto.RangeRequest, res *proto.DownloadResult) (*proto.ByteRange, error) {
	if res.Range == nil {
		return nil, nil
	}
	if rng != nil {
		if want, ok := rng.Part(res.Size, res.Version, res.ModTime); ok && want == *res.Range {
			return res.Range, nil
		}
	}
	return nil, fserr.New(fserr.IOError, "download", path, "the host sent %d bytes from byte %d of %s, not the range asked", res.Range.Length, res.Range.Offset, path).
		WithHint("download the whole file, or update fsplane on the host")
}

// copyTimed copies src to w, giving each write to the client, and the
// final flush, hostWriteTimeout. A writer without deadlines (a wrapper
// that hides them) is written to without.
func copyTimed(w http.ResponseWriter, src io.Reader) (int64, error) {
	rc := http.NewResponseController(w)
	send := func(b []byte) (int, error) {
		if err := rc.SetWriteDeadline(time.Now().Add(hostWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return 0, err
		}
		if b != nil {
			return w.Write(b)
		}
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return 0, err
		}
		return 0, nil
	}
	// Without a WriteTimeout the server leaves a connection's deadline as
	// it is for the next request on it: clear ours.
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	buf := make([]byte, 64<<10)
	var n int64
	for {
		k, rerr := src.Read(buf)
		if k > 0 {
			m, err := send(buf[:k])
			n += int64(m)
			if err != nil {
				return n, err
			}
		}
		if rerr == io.EOF {
			_, err := send(nil)
			return n, err
		}
		if rerr != nil {
			return n, rerr
		}
	}
}
