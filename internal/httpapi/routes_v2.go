package httpapi

import (
	"net/http"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

// v2Routes registers AIO's /v2/fs routes and fsplane's extensions.
func (s *Server) v2Routes() {
	s.handle(route{Method: "GET", Path: "/v2/fs/read", Summary: "Read a text file (0-based start_line inclusive, end_line exclusive)", Tag: "v2",
		Query: typeOf[readQuery](), Data: typeOf[readData](), Statuses: []int{400, 403, 404, 413, 422}}, s.v2Read)
	s.handle(route{Method: "POST", Path: "/v2/fs/write", Summary: "Write a file atomically (creates parent directories)", Tag: "v2",
		Query: typeOf[userQuery](), Body: typeOf[v2WriteBody](), Data: typeOf[writeData](), Statuses: []int{400, 403, 404, 409, 507}}, s.v2Write)
	s.handle(route{Method: "POST", Path: "/v2/fs/edit", Summary: "str_replace, insert or undo_edit on a file", Tag: "v2",
		Query: typeOf[userQuery](), Body: typeOf[v2EditBody](), Data: typeOf[editorData](), Statuses: []int{400, 403, 404, 409}}, s.v2Edit)
	s.handle(route{Method: "POST", Path: "/v2/fs/patch", Summary: "Apply a Codex multi-file patch or an Agent Zero patch_text, all or nothing (extension)", Tag: "v2",
		Body: typeOf[patchBody](), Data: typeOf[patchData](), Statuses: []int{400, 403, 404, 409}}, s.v2Patch)
	s.handle(route{Method: "POST", Path: "/v2/fs/undo", Summary: "Undo the last recorded change of a file (extension)", Tag: "v2",
		Body: typeOf[undoBody](), Data: typeOf[undoData](), Statuses: []int{400, 403, 404, 409}}, s.v2Undo)
}

type userQuery struct {
	User string `json:"user,omitempty" jsonschema:"account that owns new files and directories"`
}

type readQuery struct {
	Path      string `json:"path" jsonschema:"file to read"`
	StartLine *int   `json:"start_line,omitempty" jsonschema:"0-based first line, inclusive"`
	EndLine   *int   `json:"end_line,omitempty" jsonschema:"0-based end line, exclusive"`
	User      string `json:"user,omitempty" jsonschema:"accepted for compatibility; reads use the daemon's account"`
}

type readData struct {
	Content    string `json:"content"`
	File       string `json:"file"`
	Version    string `json:"version" jsonschema:"content hash of the whole file; pass as expected_version"`
	TotalLines int    `json:"total_lines"`
}

// readRange converts AIO's 0-based [start, end) to ops' 1-based inclusive.
func readRange(start, end *int) (from, to int) {
	if start != nil {
		from = *start + 1
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
	res, err := s.read(r, path, start, end)
	if err != nil {
		fail(w, v2, "read", path, err)
		return
	}
	ok(w, "File read successfully", res)
}

func (s *Server) read(r *http.Request, path string, start, end *int) (*readData, error) {
	from, to := readRange(start, end)
	if to == -2 || (start != nil && end != nil && *end <= *start) {
		// An empty range still checks the file and reports its version.
		res, err := s.eng.Read(r.Context(), ops.ReadRequest{Path: path, LineFrom: 1, LineTo: 1})
		if err != nil {
			return nil, err
		}
		return &readData{File: res.Path, Version: res.Version, TotalLines: res.TotalLines}, nil
	}
	res, err := s.eng.Read(r.Context(), ops.ReadRequest{Path: path, LineFrom: from, LineTo: to})
	if err != nil {
		return nil, err
	}
	return &readData{Content: res.Content, File: res.Path, Version: res.Version, TotalLines: res.TotalLines}, nil
}

type v2WriteBody struct {
	Path            string  `json:"path"`
	Content         string  `json:"content"`
	Encoding        *string `json:"encoding,omitempty" jsonschema:"utf-8 (default), base64 or raw (one byte per character)"`
	Append          bool    `json:"append,omitempty"`
	LeadingNewline  bool    `json:"leading_newline,omitempty" jsonschema:"utf-8 only"`
	TrailingNewline bool    `json:"trailing_newline,omitempty" jsonschema:"utf-8 only"`
	ExpectedVersion string  `json:"expected_version,omitempty" jsonschema:"extension: write only if the file still has this version (409 stale_version otherwise)"`
}

func (s *Server) v2Write(w http.ResponseWriter, r *http.Request) {
	var b v2WriteBody
	errs := decode(r, &b, bodyRules{strict: true})
	errs = append(errs, encodingErrors(b.Encoding)...)
	if len(errs) > 0 {
		invalid(w, errs)
		return
	}
	res, err := s.write(r, writeParams{Path: b.Path, Content: b.Content, Encoding: deref(b.Encoding), Append: b.Append,
		LeadingNewline: b.LeadingNewline, TrailingNewline: b.TrailingNewline, ExpectedVersion: b.ExpectedVersion})
	if err != nil {
		fail(w, v2, "write", b.Path, err)
		return
	}
	ok(w, "File written successfully", res)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

type v2EditBody struct {
	Command         string  `json:"command" jsonschema:"str_replace, insert or undo_edit"`
	Path            string  `json:"path"`
	OldStr          *string `json:"old_str,omitempty"`
	NewStr          *string `json:"new_str,omitempty"`
	InsertLine      *int    `json:"insert_line,omitempty" jsonschema:"insert after this line; 0 inserts at the top"`
	ReplaceMode     *string `json:"replace_mode,omitempty" jsonschema:"ALL, FIRST or LAST; absent means old_str must match exactly once"`
	Match           *string `json:"match,omitempty" jsonschema:"extension: exact (default, as AIO) or tolerant (fsplane's matching ladder)"`
	ExpectedVersion string  `json:"expected_version,omitempty" jsonschema:"extension: 409 stale_version unless the file has this version"`
}

func (s *Server) v2Edit(w http.ResponseWriter, r *http.Request) {
	var b v2EditBody
	errs := decode(r, &b, bodyRules{})
	errs = append(errs, editorErrors(b.ReplaceMode, b.Match)...)
	if len(errs) > 0 {
		invalid(w, errs)
		return
	}
	switch b.Command {
	case "view":
		fail(w, v2, "edit", b.Path, badCommand("view", "use GET /v2/fs/read to view a file"))
		return
	case "create":
		fail(w, v2, "edit", b.Path, badCommand("create", "use POST /v2/fs/write to create a file"))
		return
	}
	res, err := s.editor(r, editorParams{Command: b.Command, Path: b.Path, OldStr: b.OldStr, NewStr: b.NewStr, InsertLine: b.InsertLine,
		ReplaceMode: deref(b.ReplaceMode), Match: deref(b.Match), ExpectedVersion: b.ExpectedVersion})
	if err != nil {
		fail(w, v2, "edit", b.Path, err)
		return
	}
	ok(w, "File edited successfully", res)
}

func badCommand(cmd, hint string) error {
	return fserr.New(fserr.BadRequest, "edit", "", "command %s is not supported on /v2/fs/edit", cmd).WithHint("%s", hint)
}

type patchBody struct {
	Patch            string            `json:"patch" jsonschema:"Codex apply_patch text, or Agent Zero patch_text when path is set"`
	Path             string            `json:"path,omitempty" jsonschema:"single-file form: the file the patch_text updates"`
	DryRun           bool              `json:"dry_run,omitempty" jsonschema:"plan and diff without writing"`
	Diff             bool              `json:"diff,omitempty" jsonschema:"include unified diffs"`
	ExpectedVersions map[string]string `json:"expected_versions,omitempty" jsonschema:"path → version the patch was written against"`
}

type patchFileData struct {
	Path    string `json:"path"`
	From    string `json:"from,omitempty" jsonschema:"a move's source"`
	Action  string `json:"action" jsonschema:"add, update, delete or move"`
	Version string `json:"version,omitempty"`
	Diff    string `json:"diff,omitempty"`
}

type patchData struct {
	Files   []patchFileData `json:"files"`
	Output  string          `json:"output" jsonschema:"Codex's success listing"`
	DryRun  bool            `json:"dry_run"`
	Diff    string          `json:"diff,omitempty"`
	Notices []string        `json:"notices,omitempty"`
}

func (s *Server) v2Patch(w http.ResponseWriter, r *http.Request) {
	var b patchBody
	if errs := decode(r, &b, bodyRules{}); len(errs) > 0 {
		invalid(w, errs)
		return
	}
	res, err := s.eng.Patch(r.Context(), ops.PatchRequest{Patch: b.Patch, Path: b.Path, DryRun: b.DryRun, Diff: b.Diff, ExpectedVersions: b.ExpectedVersions})
	if err != nil {
		fail(w, v2, "patch", b.Path, err)
		return
	}
	d := patchData{Output: res.Summary(), DryRun: res.DryRun, Notices: res.Notices}
	if b.Diff || b.DryRun {
		d.Diff = res.Diff
	}
	for _, sec := range res.Sections {
		d.Files = append(d.Files, patchFileData{Path: sec.Path, From: sec.From, Action: sec.Action, Version: sec.Version, Diff: sec.Diff})
	}
	msg := "Patch applied"
	if b.DryRun {
		msg = "Patch planned (dry run): nothing was written"
	}
	ok(w, msg, d)
}

type undoBody struct {
	Path string `json:"path"`
}

type undoData struct {
	Path    string `json:"path"`
	Undone  string `json:"undone" jsonschema:"the operation that was reverted"`
	Deleted bool   `json:"deleted" jsonschema:"the reverted change created the file, so it was removed"`
	Version string `json:"version,omitempty"`
}

func (s *Server) v2Undo(w http.ResponseWriter, r *http.Request) {
	var b undoBody
	if errs := decode(r, &b, bodyRules{}); len(errs) > 0 {
		invalid(w, errs)
		return
	}
	res, err := s.eng.Undo(r.Context(), ops.UndoRequest{Path: b.Path})
	if err != nil {
		fail(w, v2, "undo", b.Path, err)
		return
	}
	ok(w, "Undone", undoData{Path: res.Path, Undone: res.Op, Deleted: res.Deleted, Version: res.Version})
}
