package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/fsplane/fsplane/internal/connector"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

// A host download's write to its client may take up to the
// Server's HostWriteTimeout, by default proto.IdleTimeout: the 30 s the
// connector gives a consumer to take one chunk (connector.DataSink). A
// slow client is fine: each write is at most one 64 KiB chunk, and a
// client that limits its rate (curl --limit-rate) pauses reading for
// seconds at a time, which a shorter bound took for a stall. Only a client
// that stops reading is cut. The host's connection, which carries every
// other operation on that host too, does not wait for the client: with
// flow control the host sends a download only as fast as its client
// takes it; with a host from before flow control the connector fails a
// download whose client falls behind (takes nothing, or under 1 MiB/s
// while the host sends faster, for 2 s), telling the host to stop sending
// (transfer_abort). The closed pipe then ends the copy, and the deadline
// a write to the client still waiting.
func (s *Server) hostWriteTimeout() time.Duration {
	if d := s.opts.HostWriteTimeout; d > 0 {
		return d
	}
	return proto.IdleTimeout
}

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
// hostWriteTimeout) cuts the response, so a client never takes a partial
// file for a whole one, nor waits for bytes that will not come.
//
// Ranges and conditional requests are answered as the local route answers
// them (206, multipart/byteranges, 304, 412, 416 with the JSON envelope):
// they travel in the download op (proto.Conditional), the host decides on
// the file it opened and sends only the bytes of that answer, from that
// descriptor, and the hub checks the answer against the result
// (hostAnswer).
//
// Several ranges travel in one op and come back as one transfer, the
// parts one after the other, which the hub frames (byteRanges); one op per
// range would have to pin a version across ops. The host reads every part
// from the one descriptor and fails the transfer if the file changes
// (transfer.Source.Sections), so the parts are one version's or the
// response is cut before its closing boundary.
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
	cond, legacy := hostConditional(r.Header)
	pr, pw := io.Pipe()
	defer pr.Close()
	req := proto.DownloadRequest{Path: path, Range: legacy, Conditional: cond, Head: r.Method == http.MethodHead}
	var sink connector.DataSink = pipeSink{pw}
	if req.Head {
		// The headers alone: the host sends no bytes, and so takes none
		// of its data slots, which stalled downloads may all hold. With
		// no sink, bytes a host from before Head sends anyway are refused
		// (transfer_abort).
		sink = nil
	}
	res, err := remote.Download(r.Context(), req, sink)
	if err != nil {
		fail(w, v2, "download", path, err)
		return
	}
	// From here a return closes the pipe, which ends the host's transfer.
	out, err := hostAnswer(path, cond, legacy, res)
	if err != nil {
		fail(w, v2, "download", path, err)
		return
	}
	if out.Status == http.StatusRequestedRangeNotSatisfiable {
		if cond == nil || !cond.BadRange {
			h.Set("Content-Range", fmt.Sprintf("bytes */%d", res.Size))
		}
		refuseRange(w, "download", path, r.Header.Get("Range"))
		return
	}
	if res.Version != "" {
		h.Set("ETag", `"`+res.Version+`"`)
	}
	if t := res.ModTime; !t.IsZero() && !t.Equal(time.Unix(0, 0)) {
		h.Set("Last-Modified", t.UTC().Format(http.TimeFormat))
	}
	switch out.Status {
	case http.StatusNotModified:
		// As http.ServeContent: no representation headers, and the date
		// only without a tag (RFC 9110 §15.4.5).
		if res.Version != "" {
			h.Del("Last-Modified")
		}
		w.WriteHeader(out.Status)
		return
	case http.StatusPreconditionFailed:
		refusePrecondition(w, "download", path)
		return
	}
	h.Set("Content-Type", "application/octet-stream")
	var body io.Reader = pr
	size := res.Size
	switch len(out.Parts) {
	case 0:
	case 1:
		p := out.Parts[0]
		size = p.Length
		h.Set("Content-Range", contentRange(p, res.Size))
	default:
		var ctype string
		ctype, size, body = byteRanges(out.Parts, res.Size, pr)
		h.Set("Content-Type", ctype)
	}
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(out.Status)
	if r.Method == http.MethodHead {
		pr.CloseWithError(errors.New("HEAD request: body not wanted"))
		return
	}
	// A client that goes away ends the wait for the host's bytes too; the
	// closed pipe then fails the stream, and the host is told.
	stop := context.AfterFunc(r.Context(), func() { pr.CloseWithError(r.Context().Err()) })
	defer stop()
	n, err := copyTimed(w, body, s.hostWriteTimeout())
	if err != nil || n != size {
		s.log.Warn("Host download cut", "path", path, "bytes", n, "of", size, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// copyTimed copies src to w, giving each write to the client, and the
// final flush, timeout, and holding back the last byte it has
// until src ends cleanly: a src that fails never yields a whole response.
// A writer without deadlines (a wrapper that hides them) is written to
// without.
func copyTimed(w http.ResponseWriter, src io.Reader, timeout time.Duration) (int64, error) {
	rc := http.NewResponseController(w)
	send := func(b []byte) (int, error) {
		if err := rc.SetWriteDeadline(time.Now().Add(timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
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
	// The last byte read is held back until src ends: src's EOF comes
	// only after the connector checked the transfer's size and SHA-256
	// (DataSink.Finish), and a response one byte short of its
	// Content-Length is one no client takes for whole. Bytes that fail the
	// check are thus never a complete download.
	// One byte over the connector's 64 KiB chunks: a read after the held
	// byte still takes a whole chunk, and each chunk is one write.
	buf := make([]byte, 64<<10+1)
	var n int64
	held := 0 // 1 while buf[0] is the byte held back
	for {
		k, rerr := src.Read(buf[held:])
		k += held
		if rerr == io.EOF {
			if k > 0 {
				m, err := send(buf[:k])
				n += int64(m)
				if err != nil {
					return n, err
				}
			}
			_, err := send(nil)
			return n, err
		}
		if rerr != nil {
			return n, rerr
		}
		if k > 1 {
			m, err := send(buf[:k-1])
			n += int64(m)
			if err != nil {
				return n, err
			}
			buf[0] = buf[k-1]
		}
		held = min(k, 1)
	}
}
