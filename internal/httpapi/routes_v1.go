package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"syscall"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

// v1Routes registers AIO's /v1/file routes: POST with JSON bodies, files
// keyed as "file" on read/write/replace, and every expected failure
// answered 200 with success:false.
func (s *Server) v1Routes() {
	s.handle(route{Method: "POST", Path: "/v1/file/read", Summary: "Read a text file (0-based start_line, exclusive end_line)", Tag: "v1",
		Body: typeOf[client.V1ReadRequest](), Data: typeOf[client.ReadResult](), FailOK: true}, s.v1Read)
	s.handle(route{Method: "POST", Path: "/v1/file/write", Summary: "Write a file atomically", Tag: "v1",
		Body: typeOf[client.V1WriteRequest](), Data: typeOf[client.WriteResult](), FailOK: true}, s.v1Write)
	s.handle(route{Method: "POST", Path: "/v1/file/str_replace_editor", Summary: "view, create, str_replace, insert, undo_edit", Tag: "v1",
		Body: typeOf[client.V1EditorRequest](), Data: typeOf[client.EditorResult](), FailOK: true}, s.v1Editor)
	s.handle(route{Method: "POST", Path: "/v1/file/replace", Summary: "Replace every occurrence of old_str", Tag: "v1",
		Body: typeOf[client.V1ReplaceRequest](), Data: typeOf[client.ReplaceResult](), FailOK: true}, s.v1Replace)
}

func (s *Server) v1Read(w http.ResponseWriter, r *http.Request) {
	var b client.V1ReadRequest
	errs := decode(r, &b, bodyRules{})
	errs = append(errs, nonNegative("start_line", b.StartLine)...)
	errs = append(errs, nonNegative("end_line", b.EndLine)...)
	if len(errs) > 0 {
		invalid(w, errs)
		return
	}
	res, quoted, err := s.read(r, b.File, b.StartLine, b.EndLine)
	if err != nil {
		fail(w, v1, "read", b.File, err)
		return
	}
	writeRead(w, "File read successfully", res, quoted)
}

// sudoUser is AIO's compatibility spelling: sudo:true means user "root"
// (ownership of created files), nothing else.
func sudoUser(sudo *bool) string {
	if sudo != nil && *sudo {
		return "root"
	}
	return ""
}

func nonNegative(name string, v *int) []client.ValidationError {
	if v != nil && *v < 0 {
		return []client.ValidationError{{Location: []string{"body", name}, Message: name + " must be >= 0", Type: "value_error.number.not_ge"}}
	}
	return nil
}

func (s *Server) v1Write(w http.ResponseWriter, r *http.Request) {
	var b client.V1WriteRequest
	errs := decode(r, &b, bodyRules{})
	errs = append(errs, encodingErrors(b.Encoding)...)
	if len(errs) > 0 {
		invalid(w, errs)
		return
	}
	res, hint, err := s.write(r, writeParams{Path: b.File, Content: b.Content, Encoding: deref(b.Encoding), Append: b.Append,
		LeadingNewline: b.LeadingNewline, TrailingNewline: b.TrailingNewline, ExpectedVersion: b.ExpectedVersion, User: sudoUser(b.Sudo)})
	if err != nil {
		fail(w, v1, "write", b.File, err)
		return
	}
	okHint(w, "File written successfully", res, hint)
}

var editorCommands = map[string]bool{"view": true, "create": true, "str_replace": true, "insert": true, "undo_edit": true}

func (s *Server) v1Editor(w http.ResponseWriter, r *http.Request) {
	var b client.V1EditorRequest
	errs := decode(r, &b, bodyRules{})
	errs = append(errs, editorErrors(b.ReplaceMode, b.Match)...)
	// command is an enum in AIO's schema: "" fails it as "bogus" does (a
	// missing command is reported as missing already).
	if !editorCommands[b.Command] && !slices.ContainsFunc(errs, func(e client.ValidationError) bool { return slices.Equal(e.Location, []string{"body", "command"}) }) {
		errs = append(errs, client.ValidationError{Location: []string{"body", "command"}, Message: "command must be one of view, create, str_replace, insert, undo_edit", Type: "value_error.enum"})
	}
	if len(errs) > 0 {
		invalid(w, errs)
		return
	}
	var (
		res    *client.EditorResult
		notice string
		err    error
	)
	switch b.Command {
	case "view":
		res, err = s.view(r, b.Path, b.ViewRange)
	case "create":
		res, notice, err = s.create(r, b.Path, b.FileText)
	default:
		res, notice, err = s.editor(r, editorParams{Command: b.Command, Path: b.Path, OldStr: b.OldStr, NewStr: b.NewStr, InsertLine: b.InsertLine,
			ReplaceMode: deref(b.ReplaceMode), Match: deref(b.Match), ExpectedVersion: b.ExpectedVersion})
	}
	if err != nil {
		fail(w, v1, b.Command, b.Path, err)
		return
	}
	okHint(w, "Operation successful", res, notice)
}

// view is str_replace_editor's view: a file in cat -n form, a directory
// as ops.ViewDir lists it (Anthropic's editor lists one rather than
// failing). view_range only applies to files.
func (s *Server) view(r *http.Request, path string, vr []int) (*client.EditorResult, error) {
	res, err := s.eng.Read(r.Context(), ops.ReadRequest{Path: path})
	if e, _ := fserr.As(err); e != nil && e.Code == fserr.InvalidTarget && e.Errno == syscall.EISDIR {
		if len(vr) > 0 {
			return nil, fserr.New(fserr.BadRequest, "view", path, "The `view_range` parameter is not allowed when `path` points to a directory: view_range only applies to files.").
				WithHint("drop view_range to list the directory")
		}
		d, err := s.eng.ViewDir(r.Context(), path)
		if err != nil {
			return nil, err
		}
		return &client.EditorResult{Output: d.Output, Path: d.Path, PrevExist: true}, nil
	}
	if err != nil {
		return nil, err
	}
	start, end := 1, -1
	if len(vr) > 0 {
		if len(vr) != 2 {
			return nil, fserr.New(fserr.BadRequest, "view", path, "Invalid `view_range`. It should be a list of two integers.")
		}
		start, end = vr[0], vr[1]
	}
	out, err := edit.View([]byte(res.Content), start, end)
	if err != nil {
		return nil, err
	}
	return &client.EditorResult{
		Output: fmt.Sprintf("Here's the result of running `cat -n` on %s:\n%s", path, out),
		Path:   res.Path, PrevExist: true, Version: res.Version,
	}, nil
}

// create is str_replace_editor's create; the string is the envelope's
// hint (see undoNote).
func (s *Server) create(r *http.Request, path string, text *string) (*client.EditorResult, string, error) {
	if text == nil {
		return nil, "", fserr.New(fserr.BadRequest, "create", path, "Parameter `file_text` is required for command: create")
	}
	res, err := s.eng.Write(r.Context(), ops.WriteRequest{Path: path, Content: []byte(*text), CreateOnly: true})
	if err != nil {
		if fserr.Is(err, fserr.AlreadyExists) {
			e, _ := fserr.As(err)
			out := *e
			out.Message = fmt.Sprintf("File already exists at: %s. Cannot overwrite files using command `create`.", path)
			out.Hint = "use str_replace or insert to change it, or the write route to replace it"
			return nil, "", &out
		}
		return nil, "", err
	}
	undo, hint := undoNote(res.UndoRecorded, whyCreated)
	return &client.EditorResult{Output: "File created successfully at: " + path, Path: res.Path, PrevExist: false,
		NewContent: text, Version: res.Version, UndoRecorded: undo}, hint, nil
}

func (s *Server) v1Replace(w http.ResponseWriter, r *http.Request) {
	var b client.V1ReplaceRequest
	errs := decode(r, &b, bodyRules{})
	if b.Match != "" {
		errs = append(errs, editorErrors(nil, &b.Match)...)
	}
	if len(errs) > 0 {
		invalid(w, errs)
		return
	}
	strict := b.Match != "tolerant"
	res, err := s.eng.Edit(r.Context(), ops.EditRequest{Path: b.File, Old: b.OldStr, New: b.NewStr, Mode: edit.ModeAll, Strict: strict, Names: editNames, ExpectedVersion: b.Version})
	if err != nil {
		fail(w, v1, "replace", b.File, aioEditError(err, strict))
		return
	}
	undo, hint := undoNote(res.UndoRecorded, whyFile)
	okHint(w, "Operation successful", client.ReplaceResult{File: res.Path, ReplacedCount: res.Count, Version: res.Version, UndoRecorded: undo}, hint)
}
