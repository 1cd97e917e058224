package hub

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/workspace"
)

// Read caps of text_editor_remote, as Agent Zero's: a model reads big
// files in pages and follows next_line.
const (
	teMaxLines = 2000
	teMaxBytes = 256 << 10
)

// TextEditor runs Agent Zero's text_editor_remote on a connected host
// (host: id or name, "" for the only one): its arguments, output texts and
// messages, with fsplane's engine underneath (atomic writes, the matching
// ladder, line edits that need a fresh read in the same context, no
// payload cap thanks to transfers). Fronts (HTTP, MCP) share it.
//
// It always returns a result whose Output is the text for the model; on
// failure OK is false, Code the error code, and err the *fserr.Error.
func (h *Hub) TextEditor(ctx context.Context, host string, b client.TextEditorRequest) (*client.TextEditorResult, error) {
	action := strings.ReplaceAll(strings.ToLower(pyStrip(b.Action)), "-", "_")
	// Agent Zero strips the path as it strips the action: a model's stray
	// newline or space must not name, or create, another file.
	b.Path = pyStrip(b.Path)
	res := &client.TextEditorResult{Action: action, Path: b.Path}
	if msg, hint := teValidate(action, &b); msg != "" {
		e := fserr.New(fserr.BadRequest, "text_editor", b.Path, "%s", msg)
		if hint != "" {
			e = e.WithHint("%s", hint)
		}
		return teFail(res, e, false)
	}
	remote, err := h.Remote(host)
	if err != nil {
		return teFail(res, teRouteError(err), false)
	}
	res.Host = remote.Host().Info().Name
	if action != "read" && remote.Host().Info().Mode != proto.ReadWrite {
		return teFail(res, h.readOnlyError(action, b.Path, res.Host), false)
	}
	caller := TextEditorCaller(b.ContextID)
	switch action {
	case "read":
		err = teRead(ctx, remote, &b, caller, res)
	case "write":
		var wr *ops.WriteResult
		if wr, err = remote.Write(ctx, ops.WriteRequest{Path: b.Path, Content: []byte(*b.Content), Caller: caller}); err == nil {
			res.Output, res.Version, res.Notice = b.Path+" written successfully", wr.Version, wr.Notice
			if res.Notice != "" {
				// In the output too, as for a patch: it is all the model sees.
				res.Output += "\n[" + res.Notice + "]"
			}
		}
	case "patch":
		err = tePatch(ctx, remote, &b, caller, res)
	}
	if err != nil {
		return teFail(res, err, true)
	}
	res.OK = true
	return res, nil
}

// readOnlyError refuses a write to the read-only host name. Agent Zero's
// text says no connected CLI allows writes, which is true only when none
// does: with another one in Read&Write, it names the host instead.
func (h *Hub) readOnlyError(action, path, name string) error {
	msg := "text_editor_remote: no connected CLI currently allows remote file writes. Press F3 to switch the CLI to Read&Write."
	for _, o := range h.Hosts() {
		if o.Mode == proto.ReadWrite {
			msg = fmt.Sprintf("text_editor_remote: the CLI %s does not allow remote file writes. Press F3 to switch the CLI to Read&Write.", pyRepr(name))
			break
		}
	}
	return fserr.New(fserr.ReadOnly, action, path, "%s", msg)
}

// teFail completes a failed result: Agent Zero's text (wrapped as
// "Error (op 'path'): …" for failures of the operation itself, not for
// the freshness prompts, which Agent Zero returns as they are) and the
// code.
func teFail(res *client.TextEditorResult, err error, wrapped bool) (*client.TextEditorResult, error) {
	e := fserr.From(res.Action, res.Path, err)
	res.OK, res.Code, res.Output = false, string(e.Code), e.Message
	switch {
	case !wrapped || e.Code == fserr.MustRead || e.Code == fserr.StaleVersion && strings.HasPrefix(e.Message, "error patching "):
	case e.Code == fserr.Timeout:
		res.Output = fmt.Sprintf("text_editor_remote: timed out waiting for CLI to respond to %s on %s; the operation may still have completed: re-read before retrying", res.Action, pyRepr(res.Path))
	default:
		res.Output = fmt.Sprintf("Error (%s %s): %s", res.Action, pyRepr(res.Path), e.Message)
	}
	return res, e
}

// teValidate checks the arguments in Agent Zero's order, with its
// messages, and a hint where the message alone does not say what to do.
func teValidate(action string, b *client.TextEditorRequest) (msg, hint string) {
	switch {
	case action == "":
		return "action is required (read, write, or patch)", ""
	case action != "read" && action != "write" && action != "patch":
		return fmt.Sprintf("Unknown action: %s. Use read, write, or patch.", pyRepr(action)), ""
	case b.Path == "":
		return "path is required", ""
	case action == "write" && b.Content == nil:
		return "content is required for write", ""
	case action != "patch":
		return "", ""
	}
	forms := 0
	if b.Edits != nil {
		forms++
	}
	if b.PatchText != nil {
		forms++
	}
	if b.OldText != nil || b.NewText != nil {
		forms++
	}
	switch {
	case forms > 1:
		return "provide exactly one patch form: edits, patch_text, or old_text/new_text", ""
	case forms == 0:
		return "edits, patch_text, or old_text/new_text is required for patch", ""
	case (b.NewText != nil || b.OldText != nil) && (b.OldText == nil || *b.OldText == ""):
		// Agent Zero's test is "not old_text": empty counts as missing.
		return "old_text is required for exact replace",
			"copy the text to replace from the file; to add lines, use patch_text: an @@ line naming the line above, then + lines"
	case b.PatchText != nil && pyStrip(*b.PatchText) == "":
		return "patch_text must not be empty", ""
	case b.Edits != nil && len(b.Edits) == 0:
		return "edits must be a non-empty list", ""
	}
	return "", ""
}

func teRead(ctx context.Context, remote *Remote, b *client.TextEditorRequest, caller string, res *client.TextEditorResult) error {
	req := ops.ReadRequest{Path: b.Path, Caller: caller}
	if b.LineFrom != nil && *b.LineFrom != 0 {
		if *b.LineFrom < 1 {
			return fserr.New(fserr.BadRequest, "read", b.Path, "line_from must be >= 1")
		}
		req.LineFrom = *b.LineFrom
	}
	if b.LineTo != nil && *b.LineTo != 0 {
		if *b.LineTo < max(req.LineFrom, 1) {
			return fserr.New(fserr.BadRequest, "read", b.Path, "line_to must be >= line_from")
		}
		req.LineTo = *b.LineTo
	}
	// Ask the host for one page at most: a big file's rest never crosses
	// the connection, and a file too large to read whole (over 16 MiB)
	// still reads page by page.
	first := max(req.LineFrom, 1)
	wantTo := req.LineTo
	if req.LineTo == 0 || req.LineTo > first+teMaxLines-1 {
		req.LineTo = first + teMaxLines - 1
	}
	rr, err := remote.Read(ctx, req)
	// A page of long lines can be over what a host's read returns
	// (too_large: workspace.TextLimit), though the page shows 256 KiB of
	// it at most: ask for a 64th of the lines (TextLimit/teMaxBytes, so
	// that lines of even length still fill the page) until they fit, in
	// three reads at most. A line alone over it cannot be shown at all;
	// say where to go on instead of the host's "read fewer lines".
	shrunk := false
	for fserr.CodeOf(err) == fserr.TooLarge && req.LineTo > first {
		req.LineTo, shrunk = first+(req.LineTo-first)/(workspace.TextLimit/teMaxBytes), true
		rr, err = remote.Read(ctx, req)
	}
	if fserr.CodeOf(err) == fserr.TooLarge {
		return fserr.New(fserr.TooLarge, "read", b.Path, "line %d alone is over the %d MiB a read returns. Continue with line_from=%d to skip it, or use GET %s for the complete file.",
			first, workspace.TextLimit>>20, first+1, downloadRoute(res.Host, b.Path)).
			WithHint("read from line %d on, or download the file", first+1)
	}
	if err != nil {
		return err
	}
	// Number the lines as the engine does (CRLF, LF and a lone CR end a
	// line), so a line number read here is the one an edit will change.
	var sb strings.Builder
	n, reason := 0, ""
	for rest := rr.Content; rest != ""; {
		var l, eol string
		l, eol, rest = edit.CutLine(rest)
		if eol == "\r" {
			eol = "\n" // shown as the line break it is
		}
		if sb.Len()+len(l)+len(eol)+7 > teMaxBytes {
			reason = "max_bytes"
			break
		}
		fmt.Fprintf(&sb, "%4d | %s%s", first+n, l, eol)
		n++
	}
	// The range asked for, within the file; anything of it not shown was
	// cut by the page (max_lines) or by the byte cap.
	want := rr.TotalLines
	if wantTo != 0 {
		want = min(wantTo, rr.TotalLines)
	}
	if reason == "" && first+n-1 < want {
		reason = "max_lines"
		if shrunk { // cut by the host's byte limit, not by the page's lines
			reason = "max_bytes"
		}
	}
	// Each numbered line keeps its own line break, as Agent Zero's do:
	// a last line with one shows as a blank line before "<<<", so "a\n"
	// and "a" read differently, as they are.
	res.Output = fmt.Sprintf("%s %d lines\n>>>\n%s\n<<<", b.Path, rr.TotalLines, sb.String())
	// line_to is the last line shown, within the file: first-1 when none
	// was (a line over the byte cap), the last line when line_from is
	// past the end, as the engine's read says.
	res.Version, res.TotalLines, res.LineFrom, res.LineTo = rr.Version, rr.TotalLines, first, min(first+n-1, rr.TotalLines)
	switch {
	case reason == "":
	case n == 0: // one line alone is over the byte cap: continuing from it would loop
		res.Truncated = true
		skip := ""
		if first < rr.TotalLines {
			res.NextLine = first + 1
			skip = fmt.Sprintf(" Continue with line_from=%d to skip it, or use", first+1)
		} else {
			skip = " Use"
		}
		res.Output += fmt.Sprintf("\n[Remote text read truncated by max_bytes: line %d alone is over %d KiB.%s GET %s for the complete file.]", first, teMaxBytes>>10, skip, downloadRoute(res.Host, b.Path))
	default:
		res.Truncated, res.NextLine = true, first+n
		res.Output += fmt.Sprintf("\n[Remote text read truncated by %s. Continue with line_from=%d. Use GET %s for the complete or binary file.]", reason, first+n, downloadRoute(res.Host, b.Path))
	}
	return nil
}

// tePatch applies one of Agent Zero's three patch forms. Its answer is
// Agent Zero's fixed "{path} patched successfully", which cannot say how
// the change moved lines, so a change that moves any leaves the context's
// line numbers stale (LinesStaleAfterMove), as Agent Zero marks the file
// stale: its next line edit gets stale_version until it reads the file
// again. A change in place (no line moved) keeps them fresh, and so does
// a whole-file write.
func tePatch(ctx context.Context, remote *Remote, b *client.TextEditorRequest, caller string, res *client.TextEditorResult) error {
	var version string
	switch {
	case b.Edits != nil:
		edits := make([]edit.LineEdit, len(b.Edits))
		for i, e := range b.Edits {
			edits[i] = edit.LineEdit{From: e.From, To: e.To, Content: e.Content}
			if e.From == 0 {
				edits[i].From = 1 // Agent Zero's CLI reads a missing (or 0) from as 1
			}
		}
		lr, err := remote.EditLines(ctx, ops.EditLinesRequest{Path: b.Path, Edits: edits, Caller: caller, LinesStaleAfterMove: true})
		if fserr.CodeOf(err) == fserr.MustRead {
			// The engine's hint offers expected_version, which this
			// tool does not take.
			e := *fserr.From("patch", b.Path, err)
			e.Hint = `read the file first (action "read"), then edit by line numbers`
			return &e
		}
		if err != nil {
			return err
		}
		version, res.TotalLines = lr.Version, lr.TotalLines
	case b.PatchText != nil:
		pr, err := remote.Patch(ctx, ops.PatchRequest{Patch: *b.PatchText, Path: b.Path, Caller: caller,
			IgnoreHeader: true, LinesStaleAfterMove: true}) // Agent Zero: path wins
		if err != nil {
			return err
		}
		if len(pr.Files) > 0 {
			version = pr.Files[0].Version
		}
		res.Notice = fserr.JoinHints(pr.Notices...)
	default:
		newText := ""
		if b.NewText != nil {
			newText = *b.NewText
		}
		er, err := remote.Edit(ctx, ops.EditRequest{Path: b.Path, Old: *b.OldText, New: newText, Caller: caller, LinesStaleAfterMove: true,
			Names: edit.Names{AddLines: "use patch_text: an @@ line naming the line above, then + lines"}})
		if err != nil {
			return teReplaceError(err)
		}
		version, res.Notice = er.Version, er.Notice
	}
	res.Output, res.Version = b.Path+" patched successfully", version
	if res.Notice != "" {
		// In the output too: it is all the model sees.
		res.Output += "\n[" + res.Notice + "]"
	}
	return nil
}

// downloadRoute is the hub's route for path's bytes on the host name.
func downloadRoute(name, path string) string {
	return "/v2/hosts/" + url.PathEscape(name) + "/fs/download?path=" + url.QueryEscape(path)
}

// teReplaceError words exact-replace failures as Agent Zero's local tool.
func teReplaceError(err error) error {
	e := fserr.From("patch", "", err)
	out := *e
	switch e.Code {
	case fserr.NoMatch:
		out.Message = "old_text not found"
	case fserr.AmbiguousMatch:
		out.Message = fmt.Sprintf("old_text matched %s times; provide a longer exact span", matchCount(e))
		out.Hint = "include surrounding lines in old_text so it matches once, or read the file and use edits with line numbers"
	case fserr.BadRequest:
		if strings.Contains(e.Message, "identical") {
			out.Message = "old_text and new_text are identical"
		}
	}
	return &out
}

// matchCount is how many places an ambiguous old_text matched, from the
// engine's message ("old_text matches 4 places, …"; "more than 1000
// places" past its count). e.Lines is no count: it holds each line once,
// however many matches are on it, and at most 100 of them.
func matchCount(e *fserr.Error) string {
	if _, rest, ok := strings.Cut(e.Message, "old_text matches "); ok {
		if n, _, ok := strings.Cut(rest, " places"); ok {
			return n
		}
	}
	return fmt.Sprintf("at least %d", max(len(e.Lines), 2)) // ambiguous: two or more
}

// teRouteError words routing failures as Agent Zero does.
func teRouteError(err error) error {
	e := fserr.From("route", "", err)
	out := *e
	if e.Code == fserr.Unavailable {
		out.Message = "text_editor_remote: no CLI client connected to this hub. Make sure `fsplane connect` is running and connected to this instance."
	}
	return &out
}

// TextEditorCaller is the freshness context (ops' caller) in which
// text_editor reads and edits for contextID, "" being the default one. A
// remote undo meant for the same context must run as it, or the undo
// reads to that context as another caller's change (stale_version at the
// next line edit) and is not held to the context's view.
func TextEditorCaller(contextID string) string {
	if contextID == "" {
		return "text_editor:default"
	}
	return "text_editor:" + contextID
}
