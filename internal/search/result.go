package search

import (
	"bytes"
	"context"
	"os"
)

// Match is one match in AIO's shape (GrepMatch).
type Match struct {
	// Path is relative to the search start, slash-separated; "" when the
	// start is the file itself.
	Path       string
	LineNumber int // 1-based
	// LineContent is the matching line without its line terminator (CR
	// LF, LF or a lone CR, which ends a line as edit counts lines); in
	// multiline mode, every line the match touches, joined by "\n".
	LineContent   string
	ContextBefore []string
	ContextAfter  []string
}

// Result is a whole search's outcome in AIO's shape.
type Result struct {
	Matches []Match // at most MaxResults, after skipping Offset
	// Truncated is set when more matches exist than were returned.
	Truncated bool
	// Stats are the search's, except FilesMatched: the files that
	// Matches are in. A search cut short by MaxResults has seen a match
	// in one file more (the one that told it more exist), and one that
	// skips Offset matches may skip whole files; counting those would
	// make "N matches in M files" false.
	Stats
}

// Grep runs q under start (relative to root) and gathers the matches in
// path and line order, skipping Offset and stopping after MaxResults (the
// search ends as soon as one match more has been seen, so Stats cover the
// files up to there).
func Grep(ctx context.Context, root *os.Root, start string, q *Query) (*Result, error) {
	o := q.opts
	res := &Result{Matches: []Match{}}
	limit := 0
	if o.MaxResults > 0 {
		limit = o.Offset + o.MaxResults + 1
	}
	skip := o.Offset
	files := 0 // files with a match in res.Matches
	st, err := stream(ctx, root, start, q, limit, func(fm *FileMatches) []Match {
		out := make([]Match, fm.Len())
		for i := range out {
			l := fm.Line(i)
			out[i] = Match{Path: fm.Path, LineNumber: l.Number, LineContent: string(trimCR(l.Text)),
				ContextBefore: lineStrings(l.Before), ContextAfter: lineStrings(l.After)}
		}
		return out
	}, func(_ string, ms []Match) error {
		had := len(res.Matches)
		defer func() {
			if len(res.Matches) > had {
				files++
			}
		}()
		for _, m := range ms {
			if skip > 0 {
				skip--
				continue
			}
			if o.MaxResults > 0 && len(res.Matches) >= o.MaxResults {
				res.Truncated = true
				return ErrStop
			}
			res.Matches = append(res.Matches, m)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Stats = st
	res.FilesMatched = files
	return res, nil
}

func lineStrings(ls [][]byte) []string {
	if len(ls) == 0 {
		return nil
	}
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = string(trimCR(l))
	}
	return out
}

// trimCR drops the CR of a CR LF line ending (every line of a multiline
// match).
func trimCR(b []byte) []byte {
	if bytes.IndexByte(b, '\r') < 0 {
		return b
	}
	if bytes.IndexByte(b, '\n') < 0 {
		return bytes.TrimSuffix(b, []byte{'\r'})
	}
	return bytes.ReplaceAll(bytes.TrimSuffix(b, []byte{'\r'}), []byte("\r\n"), []byte("\n"))
}
