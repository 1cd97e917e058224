package httpapi

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

// writeParams is a write as both planes describe it.
type writeParams struct {
	Path            string
	Content         string
	Encoding        string
	Append          bool
	LeadingNewline  bool
	TrailingNewline bool
	ExpectedVersion string
	User            string // owner of a created file; "" means the default user
}

// encodings are AIO's FileContentEncoding values.
var encodings = map[string]bool{"utf-8": true, "base64": true, "raw": true}

func encodingErrors(enc *string) []client.ValidationError {
	if enc != nil && !encodings[*enc] {
		return []client.ValidationError{{Location: []string{"body", "encoding"}, Message: fmt.Sprintf("encoding %q is not one of utf-8, base64, raw", *enc), Type: "value_error.enum"}}
	}
	return nil
}

// contentBytes turns the request's content into the bytes to write.
func contentBytes(p writeParams) ([]byte, error) {
	switch p.Encoding {
	case "base64":
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(p.Content))
		if err != nil {
			return nil, fserr.New(fserr.DecodeError, "write", p.Path, "content is not valid base64: %v", err).
				WithHint("send standard base64 (RFC 4648 with padding), or use encoding utf-8 for text")
		}
		return b, nil
	case "raw":
		// Latin-1 style: each character is one byte.
		b := make([]byte, 0, len(p.Content))
		for i, r := range p.Content {
			if r > 0xFF || (r == utf8.RuneError && !strings.HasPrefix(p.Content[i:], "\uFFFD")) {
				return nil, fserr.New(fserr.DecodeError, "write", p.Path, "raw content has a character above U+00FF at byte %d", i).
					WithHint("raw writes one byte per character; use base64 for arbitrary bytes")
			}
			b = append(b, byte(r))
		}
		return b, nil
	}
	s := p.Content
	if p.LeadingNewline {
		s = "\n" + s
	}
	if p.TrailingNewline {
		s += "\n"
	}
	return []byte(s), nil
}

// write runs a write for the v1 and v2 routes; the string is the
// envelope's hint (see undoNote).
func (s *Server) write(r *http.Request, p writeParams) (*client.WriteResult, string, error) {
	eng, err := s.engineFor(r)
	if err != nil {
		return nil, "", err
	}
	if p.Encoding == "" {
		p.Encoding = "utf-8"
	}
	b, err := contentBytes(p)
	if err != nil {
		return nil, "", err
	}
	res, err := eng.Write(r.Context(), ops.WriteRequest{Path: p.Path, Content: b, Append: p.Append, ExpectedVersion: p.ExpectedVersion, User: p.User})
	if err != nil {
		return nil, "", err
	}
	undo, hint := undoNote(res.UndoRecorded, fileWhy(res.Created))
	return &client.WriteResult{File: res.Path, BytesWritten: len(b), Version: res.Version, Created: res.Created, UndoRecorded: undo}, hint, nil
}

// editorParams is one str_replace_editor call as both planes describe it.
type editorParams struct {
	Command         string
	Path            string
	FileText        *string
	OldStr          *string
	NewStr          *string
	InsertLine      *int
	ViewRange       []int
	ReplaceMode     string
	Match           string
	ExpectedVersion string
}

// editNames are this front's names for what the engine's no_match hints
// mention: the old text is old_str, and tolerant matching is asked for
// with the match field.
var editNames = edit.Names{Old: "old_str", New: "new_str", Tolerant: `send "match": "tolerant"`, AddLines: "use the insert command",
	Modes: "set replace_mode to ALL, FIRST or LAST"}

var replaceModes = map[string]edit.Mode{"": edit.ModeUnique, "ALL": edit.ModeAll, "FIRST": edit.ModeFirst, "LAST": edit.ModeLast}

func editorErrors(replaceMode, match *string) []client.ValidationError {
	var errs []client.ValidationError
	if replaceMode != nil {
		if _, ok := replaceModes[strings.ToUpper(*replaceMode)]; !ok {
			errs = append(errs, client.ValidationError{Location: []string{"body", "replace_mode"}, Message: "replace_mode must be ALL, FIRST or LAST", Type: "value_error.enum"})
		}
	}
	if match != nil && *match != "exact" && *match != "tolerant" {
		errs = append(errs, client.ValidationError{Location: []string{"body", "match"}, Message: "match must be exact or tolerant", Type: "value_error.enum"})
	}
	return errs
}

func strp(s string) *string { return &s }

// contentOf is a whole-file content for old_content/new_content, or null
// when the engine did not return it (a connected host leaves it out).
func contentOf(b []byte) *string {
	if b == nil {
		return nil
	}
	return strp(string(b))
}

// editor runs one str_replace_editor command; the string is the
// envelope's hint: a notice that the file changed since the caller's
// last read, and the change's lack of an undo record (see undoNote).
func (s *Server) editor(r *http.Request, p editorParams) (*client.EditorResult, string, error) {
	eng, err := s.engineFor(r)
	if err != nil {
		return nil, "", err
	}
	ctx := r.Context()
	switch p.Command {
	case "str_replace":
		if p.OldStr == nil {
			return nil, "", fserr.New(fserr.BadRequest, "str_replace", p.Path, "Parameter `old_str` is required for command: str_replace")
		}
		newStr := ""
		if p.NewStr != nil {
			newStr = *p.NewStr
		}
		strict := p.Match != "tolerant"
		res, err := eng.Edit(ctx, ops.EditRequest{Path: p.Path, Old: *p.OldStr, New: newStr,
			Mode: replaceModes[strings.ToUpper(p.ReplaceMode)], Strict: strict, Names: editNames, ExpectedVersion: p.ExpectedVersion})
		if err != nil {
			return nil, "", aioEditError(err, strict)
		}
		undo, hint := undoNote(res.UndoRecorded, whyFile)
		return &client.EditorResult{
			Output: fmt.Sprintf("The file %s has been edited. Here's the result of running `cat -n` on a snippet of %s:\n%sReview the changes and make sure they are as expected. Edit the file again if necessary.", p.Path, p.Path, res.Snippet),
			Path:   res.Path, PrevExist: true, OldContent: contentOf(res.Before), NewContent: contentOf(res.After),
			Version: res.Version, MatchTier: res.Tier, Count: res.Count, StartLine: res.StartLine, EndLine: res.EndLine, UndoRecorded: undo,
		}, fserr.JoinHints(res.Notice, hint), nil
	case "insert":
		if p.InsertLine == nil {
			return nil, "", fserr.New(fserr.BadRequest, "insert", p.Path, "Parameter `insert_line` is required for command: insert")
		}
		if p.NewStr == nil {
			return nil, "", fserr.New(fserr.BadRequest, "insert", p.Path, "Parameter `new_str` is required for command: insert")
		}
		res, err := eng.Insert(ctx, ops.InsertRequest{Path: p.Path, After: *p.InsertLine, Text: *p.NewStr, ExpectedVersion: p.ExpectedVersion})
		if err != nil {
			return nil, "", err
		}
		undo, hint := undoNote(res.UndoRecorded, whyFile)
		return &client.EditorResult{
			Output: fmt.Sprintf("The file %s has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n%sReview the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.", p.Path, res.Snippet),
			Path:   res.Path, PrevExist: true, OldContent: contentOf(res.Before), NewContent: contentOf(res.After),
			Version: res.Version, StartLine: res.StartLine, EndLine: res.EndLine, UndoRecorded: undo,
		}, hint, nil
	case "undo_edit":
		res, err := eng.Undo(ctx, ops.UndoRequest{Path: p.Path})
		if err != nil {
			return nil, "", err
		}
		if res.Deleted {
			what := "the file it created was removed"
			if len(res.Also) > 0 {
				// A move's destination: the move is undone, not a creation.
				what = fmt.Sprintf("it was moved here from %s, which has it back", res.Also[0].Path)
			}
			return &client.EditorResult{Output: fmt.Sprintf("Last edit to %s undone successfully: %s.", p.Path, what), Path: res.Path, PrevExist: true}, "", nil
		}
		// The undo has happened: failing to show the result (binary or too
		// large for a read, removed meanwhile) must not report it as failed.
		cur, err := eng.Read(ctx, ops.ReadRequest{Path: p.Path})
		if err != nil {
			e := fserr.From("read", p.Path, err)
			return &client.EditorResult{
				Output: fmt.Sprintf("Last edit to %s undone successfully. Its content cannot be shown: %s", p.Path, e.Message),
				Path:   res.Path, PrevExist: true, Version: res.Version,
			}, e.Hint, nil
		}
		numbered, _ := edit.View([]byte(cur.Content), 1, -1)
		// new_content is the whole file, as str_replace and insert give
		// it: with its byte order mark (the read leaves it out).
		content := cur.Content
		if cur.BOM {
			content = edit.BOM + content
		}
		return &client.EditorResult{
			Output: fmt.Sprintf("Last edit to %s undone successfully. Here's the result of running `cat -n` on %s:\n%s", p.Path, p.Path, numbered),
			Path:   res.Path, PrevExist: true, NewContent: strp(content), Version: cur.Version,
		}, "", nil
	}
	return nil, "", fserr.New(fserr.BadRequest, p.Command, p.Path, "Unrecognized command %s. The allowed commands for the str_replace_editor tool are: view, create, str_replace, insert, undo_edit", p.Command)
}

// aioEditError words replacement failures as AIO does in exact mode; in
// tolerant mode the engine's own message (with the ladder's detail) stays.
func aioEditError(err error, strict bool) error {
	e := fserr.From("str_replace", "", err)
	if !strict {
		return e
	}
	out := *e
	switch e.Code {
	case fserr.NoMatch:
		out.Message = "old_str not found in file"
	case fserr.AmbiguousMatch:
		out.Message = "old_str has multiple occurrences; replace_mode is required"
		if out.Hint == "" {
			out.Hint = "set replace_mode ALL, FIRST or LAST, or include more surrounding lines"
		}
	}
	return &out
}
