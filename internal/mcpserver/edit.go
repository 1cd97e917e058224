package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

type editArgs struct {
	Path            string     `json:"path" jsonschema:"the file to edit"`
	OldText         string     `json:"old_text,omitempty" jsonschema:"the text to replace, copied from the file (without read's line-number prefixes); enough lines to match once"`
	NewText         *string    `json:"new_text,omitempty" jsonschema:"the replacement; \"\" deletes old_text"`
	ReplaceAll      bool       `json:"replace_all,omitempty" jsonschema:"replace every occurrence of old_text instead of requiring exactly one"`
	ExpectedVersion string     `json:"expected_version,omitempty" jsonschema:"the version you last read; the edit fails with stale_version if the file changed since"`
	Edits           []lineEdit `json:"edits,omitempty" jsonschema:"instead of old_text/new_text: edits by line number, valid only for the version you last read"`
}

// lineEdit is edit.LineEdit with descriptions for the model.
type lineEdit struct {
	From    int     `json:"from" jsonschema:"first line to replace, 1-based, as numbered by your last read or after your own last change"`
	To      *int    `json:"to,omitempty" jsonschema:"last line to replace, inclusive; omit (or use from-1) to insert before line from"`
	Content *string `json:"content" jsonschema:"the new lines; null or an empty string deletes lines from..to (one empty line is \"\\n\")"`
}

// editSchema is editArgs' schema with new_text a plain string: it is a
// pointer only so that a missing new_text can be told from "".
func editSchema() *jsonschema.Schema {
	return schemaFor[editArgs](func(s *jsonschema.Schema) {
		nt := s.Properties["new_text"]
		nt.Types, nt.Type = nil, "string"
	})
}

type editResult struct {
	Path         string `json:"path" jsonschema:"absolute path of the file"`
	Version      string `json:"version" jsonschema:"the file's version after the edit"`
	PrevVersion  string `json:"prev_version" jsonschema:"the file's version before the edit"`
	Changed      bool   `json:"changed" jsonschema:"the file's content changed"`
	Tier         string `json:"tier,omitempty" jsonschema:"how old_text was matched: exact, line_ending, trailing_whitespace, trimmed, indentation or punctuation"`
	Replacements int    `json:"replacements,omitempty" jsonschema:"occurrences replaced"`
	StartLine    int    `json:"start_line" jsonschema:"first changed line in the new content"`
	EndLine      int    `json:"end_line" jsonschema:"last changed line in the new content"`
	Notice       string `json:"notice,omitempty" jsonschema:"e.g. the file changed since your last read"`
}

// tierNotes says what a tolerant tier tolerated.
var tierNotes = map[string]string{
	"line_ending":         "matched ignoring line endings; the file's line endings were kept",
	"trailing_whitespace": "matched ignoring trailing whitespace",
	"trimmed":             "matched ignoring blank space around old_text",
	"indentation":         "matched ignoring indentation; new_text was re-indented to the file's",
	"punctuation":         "matched reading typographic quotes and dashes as ASCII; new_text was written as given",
}

func editFile(ctx context.Context, c *Call, in editArgs) (string, editResult, error) {
	const op = "edit"
	if len(in.Edits) > 0 {
		if in.OldText != "" || in.NewText != nil || in.ReplaceAll {
			return "", editResult{}, fserr.New(fserr.BadRequest, op, in.Path, "give either old_text and new_text, or edits, not both").
				WithHint("use old_text/new_text to replace text you can quote; use edits to change lines by the numbers of your last read")
		}
		return editLines(ctx, c, in)
	}
	switch {
	case in.OldText == "" && in.NewText == nil:
		return "", editResult{}, fserr.New(fserr.BadRequest, op, in.Path, "nothing to do: give old_text and new_text, or edits").
			WithHint("to replace text, quote it in old_text and give new_text; to change lines by number, use edits")
	case in.OldText == "":
		return "", editResult{}, fserr.New(fserr.BadRequest, op, in.Path, "old_text must not be empty").
			WithHint("quote the text to replace from the file; to insert lines before line N use edits: [{\"from\": N, \"content\": \"...\"}]; to create a file use write")
	case in.NewText == nil:
		return "", editResult{}, fserr.New(fserr.BadRequest, op, in.Path, "new_text is missing").
			WithHint("give the replacement in new_text; use \"\" to delete old_text")
	}
	p, err := c.Path(op, in.Path)
	if err != nil {
		return "", editResult{}, err
	}
	mode := edit.ModeUnique
	if in.ReplaceAll {
		mode = edit.ModeAll
	}
	r, err := c.srv.eng.Edit(ctx, ops.EditRequest{
		Path: p, Old: in.OldText, New: *in.NewText, Mode: mode, ExpectedVersion: in.ExpectedVersion, Caller: c.Caller,
	})
	if err != nil {
		return "", editResult{}, err
	}
	out := editResult{
		Path: r.Path, Version: r.Version, PrevVersion: r.PrevVersion, Changed: r.Changed, Tier: r.Tier,
		Replacements: r.Count, StartLine: r.StartLine, EndLine: r.EndLine, Notice: r.Notice,
	}
	var b strings.Builder
	name := c.display(r.Path)
	if !r.Changed {
		fmt.Fprintf(&b, "No change: %s already reads as new_text at line %d (version %s).\n", name, r.StartLine, r.Version)
	} else {
		fmt.Fprintf(&b, "Edited %s: %s at %s (match: %s), version %s.\n",
			name, plural(r.Count, "replacement", "replacements"), lineSpan(r.StartLine, r.EndLine), r.Tier, r.Version)
		if n := tierNotes[r.Tier]; n != "" {
			fmt.Fprintf(&b, "Note: %s.\n", n)
		}
	}
	if r.Notice != "" {
		fmt.Fprintf(&b, "Note: %s.\n", r.Notice)
	}
	if r.Changed {
		writeShifts(&b, r.Shifts)
	}
	writeSnippet(&b, r.Snippet)
	return b.String(), out, nil
}

func editLines(ctx context.Context, c *Call, in editArgs) (string, editResult, error) {
	p, err := c.Path("edit", in.Path)
	if err != nil {
		return "", editResult{}, err
	}
	edits := make([]edit.LineEdit, len(in.Edits))
	for i, e := range in.Edits {
		edits[i] = edit.LineEdit{From: e.From, To: e.To, Content: e.Content}
	}
	r, err := c.srv.eng.EditLines(ctx, ops.EditLinesRequest{
		Path: p, Edits: edits, ExpectedVersion: in.ExpectedVersion, Caller: c.Caller,
	})
	if err != nil {
		return "", editResult{}, err
	}
	changed := r.Version != r.PrevVersion
	out := editResult{
		Path: r.Path, Version: r.Version, PrevVersion: r.PrevVersion, Changed: changed,
		StartLine: r.StartLine, EndLine: r.EndLine,
	}
	var b strings.Builder
	name := c.display(r.Path)
	switch {
	case !changed:
		fmt.Fprintf(&b, "No change: the edits leave %s as it was (version %s).\n", name, r.Version)
	case r.EndLine < r.StartLine:
		// Only lines were deleted, by one edit (see edit.LinesResult).
		fmt.Fprintf(&b, "Edited %s by line numbers: deleted %s; %s, version %s.\n",
			name, deletedSpan(in.Edits), linesLeft(r.TotalLines), r.Version)
	default:
		fmt.Fprintf(&b, "Edited %s by line numbers: now %s changed, the file has %s, version %s.\n",
			name, lineSpan(r.StartLine, r.EndLine), plural(r.TotalLines, "line", "lines"), r.Version)
	}
	if changed {
		writeShifts(&b, r.Shifts)
	}
	writeSnippet(&b, r.Snippet)
	return b.String(), out, nil
}

// deletedSpan names the lines a deleting line edit removed, as the model
// numbered them.
func deletedSpan(edits []lineEdit) string {
	for _, e := range edits {
		if e.To != nil && *e.To >= e.From {
			return lineSpan(e.From, *e.To)
		}
	}
	return "lines"
}

// linesLeft says how many lines a file has after a deletion.
func linesLeft(n int) string {
	if n == 0 {
		return "the file is now empty"
	}
	return "the file now has " + plural(n, "line", "lines")
}

// writeShifts tells the model how its change moved line numbers: its own
// change keeps its read fresh (DESIGN §5), so a line edit with the numbers
// it read earlier would otherwise hit the wrong lines without a word.
func writeShifts(b *strings.Builder, shifts []edit.Shift) {
	if n := edit.ShiftNote(shifts); n != "" {
		fmt.Fprintf(b, "Note: %s; use the new numbers (as in the snippet) for further line edits.\n", n)
	}
}

func lineSpan(from, to int) string {
	if from == to {
		return fmt.Sprintf("line %d", from)
	}
	return fmt.Sprintf("lines %d-%d", from, to)
}

func writeSnippet(b *strings.Builder, snippet string) {
	if snippet == "" {
		return
	}
	b.WriteString("\n")
	b.WriteString(capText(snippet, 32<<10, "snippet"))
}
