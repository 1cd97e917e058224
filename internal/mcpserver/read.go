package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

// Per-call caps of read: a model's context is the scarce resource.
const (
	readMaxLines = 2000
	readMaxBytes = 256 << 10
)

type readArgs struct {
	Path     string `json:"path" jsonschema:"the file to read: relative to the first root, or absolute inside a root"`
	LineFrom int    `json:"line_from,omitempty" jsonschema:"first line to show, 1-based; default 1"`
	LineTo   int    `json:"line_to,omitempty" jsonschema:"last line to show, inclusive; default the last line (at most 2000 lines or 256 KiB are shown per call)"`
}

type readResult struct {
	Path       string `json:"path" jsonschema:"absolute path of the file"`
	Version    string `json:"version" jsonschema:"the whole file's content version; pass it as expected_version to guard a later change"`
	TotalLines int    `json:"total_lines" jsonschema:"lines in the whole file"`
	LineFrom   int    `json:"line_from" jsonschema:"first line shown"`
	LineTo     int    `json:"line_to" jsonschema:"last line shown (less than line_from when nothing was shown)"`
	Truncated  bool   `json:"truncated" jsonschema:"lines asked for were left out by the per-call cap"`
	NextLine   int    `json:"next_line_from,omitempty" jsonschema:"when truncated: the line_from that continues the read"`
	Size       int64  `json:"size" jsonschema:"file size in bytes"`
	EOL        string `json:"eol" jsonschema:"dominant line ending: LF, CRLF or CR"`
	BOM        bool   `json:"bom,omitempty" jsonschema:"the file starts with a UTF-8 byte order mark"`
}

func readFile(ctx context.Context, c *Call, in readArgs) (string, readResult, error) {
	const op = "read"
	p, err := c.Path(op, in.Path)
	if err != nil {
		return "", readResult{}, err
	}
	from := max(in.LineFrom, 1)
	upto := from + readMaxLines - 1 // ask ops for no more than one call shows
	if in.LineTo > 0 && in.LineTo < upto {
		upto = in.LineTo
	}
	req := ops.ReadRequest{Path: p, LineFrom: in.LineFrom, LineTo: upto, Caller: c.Caller}
	if in.LineFrom < 0 || (in.LineTo > 0 && in.LineTo < in.LineFrom) {
		req.LineTo = in.LineTo // let ops word the range error
	}
	r, err := c.srv.eng.Read(ctx, req)
	if err != nil {
		return "", readResult{}, err
	}
	if r.TotalLines > 0 && from > r.TotalLines {
		return "", readResult{}, fserr.New(fserr.BadRequest, op, in.Path, "line_from %d is past the end of %s, which has %s",
			from, c.display(r.Path), plural(r.TotalLines, "line", "lines")).
			WithHint("read from a line between 1 and %d", r.TotalLines)
	}
	want := in.LineTo // the last line the caller asked for
	if want <= 0 || want > r.TotalLines {
		want = r.TotalLines
	}
	n, cut := fitLines(r.Content, from, readMaxBytes)
	out := readResult{
		Path: r.Path, Version: r.Version, TotalLines: r.TotalLines, LineFrom: from, LineTo: from + n - 1,
		Size: r.Size, EOL: r.EOL, BOM: r.BOM,
	}
	if out.LineTo < want {
		out.Truncated, out.NextLine = true, out.LineTo+1
	}
	out.Truncated = out.Truncated || cut

	var b strings.Builder
	b.Grow(min(len(r.Content)+n*8, readMaxBytes) + 512)
	name := c.display(r.Path)
	switch {
	case r.TotalLines == 0:
		fmt.Fprintf(&b, "%s — empty (0 lines), version %s", name, r.Version)
	case from == 1 && out.LineTo == r.TotalLines:
		fmt.Fprintf(&b, "%s — %s, version %s", name, plural(r.TotalLines, "line", "lines"), r.Version)
	default:
		fmt.Fprintf(&b, "%s — lines %d-%d of %d, version %s", name, from, out.LineTo, r.TotalLines, r.Version)
	}
	if r.EOL != "LF" && r.TotalLines > 1 {
		fmt.Fprintf(&b, ", %s line endings", r.EOL)
	}
	if r.BOM {
		b.WriteString(", UTF-8 BOM")
	}
	b.WriteByte('\n')
	numberLines(&b, r.Content, from, n, cut, readMaxBytes)
	switch {
	case cut:
		fmt.Fprintf(&b, "[Line %d is longer than 256 KiB and was cut.", out.LineTo)
		if out.NextLine > 0 {
			fmt.Fprintf(&b, " Call read with line_from=%d to continue.", out.NextLine)
		}
		b.WriteString("]\n")
	case out.Truncated:
		why := fmt.Sprintf("%d-line", readMaxLines)
		if n < readMaxLines {
			why = "256 KiB"
		}
		fmt.Fprintf(&b, "[Truncated at the %s limit per call: showing lines %d-%d of %d. Call read with line_from=%d to continue.]\n",
			why, from, out.LineTo, r.TotalLines, out.NextLine)
	}
	return b.String(), out, nil
}
