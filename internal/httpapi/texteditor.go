package httpapi

import (
	"net/http"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/fserr"
)

// textEditor serves Agent Zero's text_editor_remote (hub.TextEditor) over
// HTTP: the output text in data.output with structured fields beside it; a
// failure answers the status of its code, the same data, and the output
// text as the message.
func (s *Server) textEditor(w http.ResponseWriter, r *http.Request) {
	var b client.TextEditorRequest
	if errs := decode(r, &b, bodyRules{}); len(errs) > 0 {
		invalid(w, errs)
		return
	}
	name := r.PathValue("host")
	if name == "-" {
		name = ""
	}
	res, err := s.hub.TextEditor(r.Context(), name, b)
	if err == nil {
		ok(w, "Operation successful", res)
		return
	}
	e := fserr.From("text_editor", b.Path, err)
	env := envelope{Success: false, Message: res.Output, Data: res}
	if e.Hint != "" {
		h := e.Hint
		env.Hint = &h
	}
	writeJSON(w, statusOf(e.Code), env)
}
