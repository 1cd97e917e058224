package httpapi

import (
	"math"
	"net/http"
	"strings"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

// v2Routes registers AIO's /v2/fs routes and fsplane's extensions.
func (s *Server) v2Routes() {
	s.handle(route{Method: "GET", Path: "/v2/fs/read", Summary: "Read a text file (0-based start_line inclusive, end_line exclusive)", Tag: "v2",
		Query: typeOf[client.ReadQuery](), Data: typeOf[client.ReadResult](), Statuses: []int{400, 403, 404, 413, 422}}, s.v2Read)
	s.handle(route{Method: "POST", Path: "/v2/fs/write", Summary: "Write a file atomically (creates parent directories)", Tag: "v2",
		Query: typeOf[client.UserQuery](), Body: typeOf[client.WriteRequest](), Data: typeOf[client.WriteResult](), Statuses: []int{400, 403, 404, 409, 507}}, s.v2Write)
	s.handle(route{Method: "POST", Path: "/v2/fs/edit", Summary: "str_replace, insert or undo_edit on a file", Tag: "v2",
		Query: typeOf[client.UserQuery](), Body: typeOf[client.EditRequest](), Data: typeOf[client.EditorResult](), Statuses: []int{400, 403, 404, 409}}, s.v2Edit)
	s.handle(route{Method: "POST", Path: "/v2/fs/patch", Summary: "Apply a Codex multi-file patch or an Agent Zero patch_text, all or nothing (extension)", Tag: "v2",
		Body: typeOf[client.PatchRequest](), Data: typeOf[client.PatchResult](), Statuses: []int{400, 403, 404, 409}}, s.v2Patch)
	s.handle(route{Method: "POST", Path: "/v2/fs/undo", Summary: "Undo the last recorded change of a file (extension)", Tag: "v2",
		Body: typeOf[client.UndoRequest](), Data: typeOf[client.UndoResult](), Statuses: []int{400, 403, 404, 409}}, s.v2Undo)
}

// readRange converts AIO's 0-based [start, end) to ops' 1-based inclusive.
// A start of math.MaxInt would overflow to a negative line; it is clamped
// first, which changes no answer: AIO slices lines as Python does, so a
// start past the end reads nothing, and no file has that many lines.
func readRange(start, end *int) (from, to int) {
	if start != nil {
		from = min(*start, math.MaxInt-1) + 1
	}
	if end != nil {
		to = *end
		if to == 0 {
			to = -2 // an empty range
		}
	}
	return from, to
}

func (s *Server) v2Read(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	path := q.str("path", true)
	start, end := q.intp("start_line", 0), q.intp("end_line", 0)
	q.str("user", false)
	if q.errs != nil {
		invalid(w, q.errs)
		return
	}
	res, quoted, err := s.read(r, path, start, end)
	if err != nil {
		fail(w, v2, "read", path, err)
		return
	}
	writeRead(w, "File read successfully", res, quoted)
}

// read runs a read for the v1 and v2 routes. quoted, when not nil, is the
// text as a checked JSON string literal from a host (see
// hub.Remote.ReadQuoted), for writeRead to copy as it is; res.Content is
// then empty.
func (s *Server) read(r *http.Request, path string, start, end *int) (res *client.ReadResult, quoted []byte, err error) {
	eng, err := s.engineFor(r)
	if err != nil {
		return nil, nil, err
	}
	from, to := readRange(start, end)
	if to == -2 || (start != nil && end != nil && *end <= *start) {
		// An empty range still checks the file and reports its version.
		res, err := eng.Read(r.Context(), ops.ReadRequest{Path: path, LineFrom: 1, LineTo: 1})
		if err != nil {
			return nil, nil, err
		}
		return &client.ReadResult{File: res.Path, Version: res.Version, TotalLines: res.TotalLines}, nil, nil
	}
	req := ops.ReadRequest{Path: path, LineFrom: from, LineTo: to}
	var out *ops.ReadResult
	if q, isQuoted := eng.(quotedReader); isQuoted {
		out, quoted, err = q.ReadQuoted(r.Context(), req)
	} else {
		out, err = eng.Read(r.Context(), req)
	}
	if err != nil {
		return nil, nil, err
	}
	res = &client.ReadResult{Content: out.Content, File: out.Path, Version: out.Version, TotalLines: out.TotalLines, BOM: out.BOM}
	if out.BOM && out.LineFrom == 1 {
		// AIO reads the mark as text (U+FEFF) and so must these routes:
		// an agent that writes back what it read keeps the file's mark.
		if quoted != nil {
			quoted = append(append([]byte{'"'}, edit.BOM...), quoted[1:]...)
		} else {
			res.Content = edit.BOM + res.Content
		}
	}
	return res, quoted, nil
}

func (s *Server) v2Write(w http.ResponseWriter, r *http.Request) {
	var b client.WriteRequest
	errs := decode(r, &b, bodyRules{strict: true})
	errs = append(errs, encodingErrors(b.Encoding)...)
	if len(errs) > 0 {
		invalid(w, errs)
		return
	}
	res, hint, err := s.write(r, writeParams{Path: b.Path, Content: b.Content, Encoding: deref(b.Encoding), Append: b.Append,
		LeadingNewline: b.LeadingNewline, TrailingNewline: b.TrailingNewline, ExpectedVersion: b.ExpectedVersion, User: s.user(r)})
	if err != nil {
		fail(w, v2, "write", b.Path, err)
		return
	}
	okHint(w, "File written successfully", res, hint)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func (s *Server) v2Edit(w http.ResponseWriter, r *http.Request) {
	var b client.EditRequest
	errs := decode(r, &b, bodyRules{})
	errs = append(errs, editorErrors(b.ReplaceMode, b.Match)...)
	if len(errs) > 0 {
		invalid(w, errs)
		return
	}
	if err := v2Command(r, b.Command); err != nil {
		fail(w, v2, "edit", b.Path, err)
		return
	}
	res, notice, err := s.editor(r, editorParams{Command: b.Command, Path: b.Path, OldStr: b.OldStr, NewStr: b.NewStr, InsertLine: b.InsertLine,
		ReplaceMode: deref(b.ReplaceMode), Match: deref(b.Match), ExpectedVersion: b.ExpectedVersion})
	if err != nil {
		fail(w, v2, "edit", b.Path, err)
		return
	}
	okHint(w, "File edited successfully", res, notice)
}

// v2Command refuses what /v2/fs/edit does not do, as AIO does (400),
// naming the routes beside the one r called: through the hub they are
// the host's (/v2/hosts/{host}/fs/…), so following the hint never
// reaches another machine's files.
func v2Command(r *http.Request, cmd string) error {
	route := r.URL.Path
	dir := route[:strings.LastIndexByte(route, '/')+1]
	var hint string
	switch cmd {
	case "str_replace", "insert", "undo_edit":
		return nil
	case "view":
		hint = "use GET " + dir + "read to view a file"
	case "create":
		hint = "use POST " + dir + "write to create a file"
	default:
		return fserr.New(fserr.BadRequest, "edit", "", "Unrecognized command %s. The allowed commands on %s are: str_replace, insert, undo_edit", cmd, route).
			WithHint("to view a file use GET %sread; to create one, POST %swrite", dir, dir)
	}
	return fserr.New(fserr.BadRequest, "edit", "", "command %s is not supported on %s", cmd, route).WithHint("%s", hint)
}

func (s *Server) v2Patch(w http.ResponseWriter, r *http.Request) {
	var b client.PatchRequest
	if errs := decode(r, &b, bodyRules{}); len(errs) > 0 {
		invalid(w, errs)
		return
	}
	eng, err := s.engineFor(r)
	if err != nil {
		fail(w, v2, "patch", b.Path, err)
		return
	}
	res, err := eng.Patch(r.Context(), ops.PatchRequest{Patch: b.Patch, Path: b.Path, DryRun: b.DryRun, Diff: b.Diff,
		ExpectedVersions: b.ExpectedVersions, ExpectedVersion: b.ExpectedVersion})
	if err != nil {
		fail(w, v2, "patch", b.Path, err)
		return
	}
	d := client.PatchResult{Output: res.Summary(), DryRun: res.DryRun, Notices: res.Notices}
	if b.Diff || b.DryRun {
		d.Diff = res.Diff
	}
	for _, sec := range res.Sections {
		d.Files = append(d.Files, client.PatchFile{Path: sec.Path, From: sec.From, Action: sec.Action, Version: sec.Version, Diff: sec.Diff})
	}
	msg := "Patch applied"
	if b.DryRun {
		msg = "Patch planned (dry run): nothing was written"
	}
	var unrecorded []string
	if !res.DryRun {
		for _, f := range res.Files {
			if !f.UndoRecorded {
				unrecorded = append(unrecorded, f.Path)
			}
		}
	}
	var hint string
	d.UndoRecorded, hint = undoNoteFor(len(unrecorded) == 0, "the patch's change to "+strings.Join(unrecorded, ", "), whyFile)
	okHint(w, msg, d, hint)
}

func (s *Server) v2Undo(w http.ResponseWriter, r *http.Request) {
	bodyRoute(v2, "undo", func(b *client.UndoRequest) string { return b.Path },
		func(r *http.Request, b *client.UndoRequest) (any, error) {
			eng, err := s.engineFor(r)
			if err != nil {
				return nil, err
			}
			res, err := eng.Undo(r.Context(), ops.UndoRequest{Path: b.Path, ExpectedVersion: b.ExpectedVersion})
			if err != nil {
				return nil, err
			}
			return undoResult(res), nil
		})(w, r)
}

// undoResult is an undo's data, with the other files it reverted.
func undoResult(r *ops.UndoResult) client.UndoResult {
	out := client.UndoResult{UndoFile: undoFile(r)}
	for i := range r.Also {
		out.Also = append(out.Also, undoFile(&r.Also[i]))
	}
	return out
}

func undoFile(r *ops.UndoResult) client.UndoFile {
	return client.UndoFile{Path: r.Path, Undone: r.Op, Deleted: r.Deleted, Version: r.Version, AlreadyUndone: r.AlreadyUndone}
}
