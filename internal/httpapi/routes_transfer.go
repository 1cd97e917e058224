package httpapi

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path/filepath"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/transfer"
	"github.com/fsplane/fsplane/internal/workspace"
)

// transferRoutes registers upload and download on both planes and the
// directory tar routes (v2 only). Downloads answer failures with v2
// statuses on both planes: their 200 body is the file.
func (s *Server) transferRoutes() {
	for _, p := range []plane{v2, v1} {
		prefix, tag, dl := "/v2/fs/", "v2", "/v2/fs/download"
		if p == v1 {
			if s.opts.Surface == "v2" {
				break
			}
			prefix, tag, dl = "/v1/file/", "v1", "/v1/file/download"
		}
		s.handle(p.failures(route{Method: "POST", Path: prefix + "upload", Summary: "Upload a file (multipart/form-data: file, and path in either order; without path, /tmp/<filename> or <root>/<filename>), streamed and renamed into place", Tag: tag,
			Query: typeOf[client.UploadQuery](), RawBody: "multipart/form-data", Data: typeOf[client.UploadResult]()}, 400, 403, 404, 409, 507), s.upload(p))
		for _, m := range []string{"GET", "HEAD"} {
			// Both planes answer a download's failures with v2 statuses:
			// its 200 body is the file.
			s.handle(route{Method: m, Path: dl, Summary: "Download a file's raw bytes (Range, If-Range, ETag = version)", Tag: tag,
				Query: typeOf[client.DownloadQuery](), Raw: "application/octet-stream", Statuses: []int{400, 403, 404, 409, 413, 416}, Conditional: true}, s.download)
		}
	}
	s.handle(route{Method: "GET", Path: "/v2/fs/tree", Summary: "A directory as a tar stream", Tag: "v2",
		Query: typeOf[client.TreeQuery](), Raw: "application/x-tar", Statuses: []int{400, 403, 404}}, s.getTree)
	s.handle(route{Method: "PUT", Path: "/v2/fs/tree", Summary: "Extract a tar into a new directory (rename) or an existing one (merge)", Tag: "v2",
		Query: typeOf[client.TreeQuery](), RawBody: "application/x-tar", Data: typeOf[client.TreeUploadResult](), Statuses: []int{400, 403, 404, 409, 413, 507}}, s.putTree)
}

// upload serves POST /v2/fs/upload and /v1/file/upload. path is optional,
// as in AIO's schema (the SDKs' upload_file(file, path?)): a form without
// one, or with an empty one, places the file by its part's filename with
// any directories (/ or \) dropped, at /tmp/<name> when /tmp lies inside
// a root, as on AIO (whose server runs with the whole file system), else
// at <first root>/<name>, the top of a confined server's workspace. An
// existing file there is replaced, as with an explicit path, and
// file_path says where the file went. A filename that leaves no name
// (empty, "." or "..") is 422 asking for path.
func (s *Server) upload(p plane) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := newQuery(r)
		qpath := q.str("path", false)
		expected := q.str("expected_version", false)
		if q.errs != nil {
			invalid(w, q.errs)
			return
		}
		var (
			res    *ops.UploadResult
			target string
		)
		// A file part sent before the path field (the TypeScript SDK's
		// order) is held in the state directory until the path arrives.
		err := transfer.ReadUpload(r, qpath, s.eng.Workspace().StateDir(), func(path, filename string, file io.Reader) error {
			target = path
			var err error
			res, err = s.eng.Upload(r.Context(), ops.UploadRequest{Path: path, FileName: filename, Body: file, User: s.user(r), ExpectedVersion: expected})
			return err
		})
		if fe, isForm := errors.AsType[*transfer.FormError](err); isForm {
			loc, typ := []string{"body"}, "value_error"
			if fe.Field != "" {
				loc = append(loc, fe.Field)
			}
			if fe.Missing {
				typ = "value_error.missing"
			}
			invalid(w, []client.ValidationError{{Location: loc, Message: fe.Message, Type: typ}})
			return
		}
		if err != nil {
			fail(w, p, "upload", target, err)
			return
		}
		undo, hint := undoNote(res.UndoRecorded, fileWhy(res.Created))
		okHint(w, "File uploaded successfully", client.UploadResult{FilePath: res.Path, FileSize: res.Size, Success: true, Version: res.Version, Created: res.Created, UndoRecorded: undo}, hint)
	}
}

// download serves a file with http.ServeContent (see transfer.Source.Serve):
// on the raw *os.File under change_policy=ignore, where the writer chain
// (request log, auth) forwards io.ReaderFrom, so the body goes out
// through sendfile; through a checked reader under abort, and for a file
// with several hard links.
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	path := q.str("path", true)
	policy, valid := transfer.ParsePolicy(q.str("change_policy", false))
	if !valid {
		q.errs = append(q.errs, client.ValidationError{Location: []string{"query", "change_policy"}, Message: "change_policy must be ignore or abort", Type: "value_error.enum"})
	}
	if q.errs != nil {
		invalid(w, q.errs)
		return
	}
	src, err := s.eng.OpenDownload(r.Context(), path)
	if err != nil {
		fail(w, v2, "download", path, err)
		return
	}
	defer src.Close()
	src.RangeRule = localRanges
	rw := &rangeRefusals{statusRecorder: statusRecorder{ResponseWriter: w}, op: "download", path: path, rangeHeader: r.Header.Get("Range")}
	started, err := src.Serve(rw, r, policy)
	switch {
	case err != nil && !started:
		fail(w, v2, "download", path, err)
	case err != nil:
		// Headers and part of the body are out; returning short of
		// Content-Length makes the server close the connection, so the
		// client sees a truncated transfer, never a complete one.
		s.log.Warn("Download cut", "path", path, "err", err)
	case r.Method != http.MethodHead:
		// ServeContent stops quietly when the file ends early (cut in
		// place under change_policy=ignore) or the client goes away.
		if sent, declared, short := rw.short(); short {
			why := "the file shrank while it was sent, or the client went away"
			if r.Context().Err() != nil {
				why = "the client went away"
			}
			s.log.Warn("Download cut", "path", path, "bytes", sent, "of", declared, "err", why)
		}
	}
}

func (s *Server) getTree(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	path := q.str("path", true)
	if q.errs != nil {
		invalid(w, q.errs)
		return
	}
	lw := &lazyHeader{w: w, name: filepath.Base(path)}
	n, err := s.eng.GetTree(r.Context(), path, lw)
	switch {
	case err != nil && n == 0 && !lw.started:
		// Entries skipped before the walk failed are not this answer's.
		delete(w.Header(), skippedCountTrailer)
		delete(w.Header(), skippedTrailer)
		fail(w, v2, "tree", path, err)
	case err != nil:
		// The tar is cut short: no end-of-archive blocks, so tar readers
		// report a truncated archive.
		s.log.Warn("Tree stream cut", "path", path, "err", err)
		abortResponse(w)
	default:
		if c := w.Header()[skippedCountTrailer]; len(c) == 1 {
			s.log.Warn("Tree download left entries out", "path", path, "skipped", c[0])
		}
	}
}

// abortResponse drops the connection under a response in progress, so
// the client cannot mistake what it got for the whole body (a chunked
// body would otherwise end cleanly). Over HTTP/1 the connection is taken
// over and closed before the last chunk; where that is impossible
// (HTTP/2), net/http's sentinel for aborting a handler resets the stream.
func abortResponse(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		_ = conn.Close()
		return
	}
	panic(http.ErrAbortHandler)
}

// lazyHeader sets the tar headers before the first byte, so an error
// found before any byte can still be answered with the JSON envelope.
type lazyHeader struct {
	w       http.ResponseWriter
	name    string
	started bool
}

func (l *lazyHeader) Write(p []byte) (int, error) {
	if !l.started {
		l.started = true
		h := l.w.Header()
		h.Set("Content-Type", "application/x-tar")
		if cd := mime.FormatMediaType("attachment", map[string]string{"filename": l.name + ".tar"}); cd != "" {
			h.Set("Content-Disposition", cd)
		}
	}
	return l.w.Write(p)
}

func (s *Server) putTree(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	path := q.str("path", true)
	if q.errs != nil {
		invalid(w, q.errs)
		return
	}
	lim := transfer.DefaultLimits
	if r.ContentLength > lim.MaxBytes {
		fail(w, v2, "tree", path, fserr.New(fserr.TooLarge, "tree", path, "the request body exceeds %d bytes", lim.MaxBytes).
			WithHint("split the tree into several archives"))
		return
	}
	res, err := s.eng.PutTree(r.Context(), ops.TreeRequest{Path: path, Body: http.MaxBytesReader(w, r.Body, lim.MaxBytes), User: s.user(r), Limits: lim})
	if err != nil {
		fail(w, v2, "tree", path, err)
		return
	}
	why := whyTree
	if res.Mode == workspace.TreeMerge {
		why = whyMerge
	}
	undo, hint := undoNote(res.UndoRecorded > 0, why)
	if res.UndoRecorded > 0 && res.UndoRecorded < res.MergedFiles {
		hint = fmt.Sprintf("undo can revert %d of the %d files this merge added or replaced (the first in path order): "+
			"the undo journal keeps at most %d files and %d MiB of old content (by default); the others have no record", res.UndoRecorded, res.MergedFiles,
			workspace.DefaultUndoMaxEntries, workspace.DefaultUndoTotalBytes>>20)
	}
	okHint(w, "Tree extracted", client.TreeUploadResult{Path: res.Path, Entries: res.Entries, Mode: res.Mode, UndoRecorded: undo, UndoFiles: res.UndoRecorded}, hint)
}
