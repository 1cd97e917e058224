package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

// searchRoutes registers content search (grep, v1 search) and find by
// name (v2 search, v1 find and glob).
func (s *Server) searchRoutes() {
	s.handle(route{Method: "POST", Path: "/v2/fs/grep", Summary: "Search file contents (regex or literal), as ripgrep", Tag: "v2",
		Body: typeOf[client.GrepRequest](), Data: typeOf[client.GrepResult](), Statuses: []int{400, 403, 404}}, s.grep(v2))
	s.handle(route{Method: "GET", Path: "/v2/fs/search", Summary: "Find files by name or path glob (cap 10,000)", Tag: "v2",
		Query: typeOf[client.FindQuery](), Data: typeOf[client.FindResult](), Statuses: []int{400, 403, 404}}, s.v2Find)
	if s.opts.Surface == "v2" {
		return
	}
	s.handle(route{Method: "POST", Path: "/v1/file/grep", Summary: "Search file contents", Tag: "v1",
		Body: typeOf[client.GrepRequest](), Data: typeOf[client.GrepResult](), FailOK: true}, s.grep(v1))
	s.handle(route{Method: "POST", Path: "/v1/file/search", Summary: "Search one file (0-based line numbers)", Tag: "v1",
		Body: typeOf[client.V1SearchRequest](), Data: typeOf[client.SearchResult](), FailOK: true},
		bodyRoute(v1, "search", func(b *client.V1SearchRequest) string { return b.File },
			func(r *http.Request, b *client.V1SearchRequest) (any, error) {
				res, err := s.eng.Search(r.Context(), ops.FileSearchRequest{File: b.File, Regex: b.Regex})
				if err != nil {
					return nil, err
				}
				out := client.SearchResult{File: res.File, Matches: nonNil(res.Matches), LineNumbers: nonNil(res.LineNumbers)}
				if c := res.Cut; c != nil {
					// AIO's data has no place for it: the hint tells,
					// in this route's 0-based line numbers.
					return hinted{data: out, hint: fmt.Sprintf("the search stopped at a NUL byte in line %d (0-based, as line_numbers): the lines from there on were not searched; read them (start_line %d) or download the file to look inside", c.Line-1, c.Line-1)}, nil
				}
				return out, nil
			}))
	s.handle(route{Method: "POST", Path: "/v1/file/find", Summary: "Find files by name", Tag: "v1",
		Body: typeOf[client.V1FindRequest](), Data: typeOf[client.FindResult](), FailOK: true},
		bodyRoute(v1, "find", func(b *client.V1FindRequest) string { return b.Path },
			func(r *http.Request, b *client.V1FindRequest) (any, error) {
				return s.find(r, b.Path, b.Glob)
			}))
	s.handle(route{Method: "POST", Path: "/v1/file/glob", Summary: "List paths matching a glob, with metadata (cap 5,000)", Tag: "v1",
		Body: typeOf[client.GlobRequest](), Data: typeOf[client.GlobResult](), FailOK: true},
		bodyRoute(v1, "glob", func(b *client.GlobRequest) string { return b.Path }, s.glob))
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (s *Server) grep(p plane) http.HandlerFunc {
	return bodyRoute(p, "grep", func(b *client.GrepRequest) string { return b.Path },
		func(r *http.Request, b *client.GrepRequest) (any, error) {
			eng, err := s.engineFor(r)
			if err != nil {
				return nil, err
			}
			req := ops.GrepRequest{Path: b.Path, Pattern: b.Pattern, Include: b.Include, Exclude: b.Exclude,
				CaseInsensitive: b.CaseInsensitive, FixedStrings: b.FixedStrings, ContextBefore: b.ContextBefore,
				ContextAfter: b.ContextAfter, MaxFileSize: b.MaxFileSize, Multiline: b.Multiline, Offset: b.Offset,
				Type: b.Type, Recursive: b.Recursive, RespectGitignore: b.RespectGitignore, IncludeHidden: b.IncludeHidden}
			if b.MaxResults != nil {
				req.MaxResults = *b.MaxResults
			}
			res, err := eng.Grep(r.Context(), req)
			if err != nil {
				return nil, err
			}
			out := client.GrepResult{Path: res.Path, Pattern: res.Pattern, Matches: make([]client.GrepMatch, len(res.Matches)),
				MatchCount: res.MatchCount, Truncated: res.Truncated, FilesSearched: res.FilesSearched,
				FilesMatched: res.FilesMatched, FilesSkippedSize: res.FilesSkippedSize,
				FilesSkippedBinary: res.FilesSkippedBinary, FilesUnreadable: res.FilesUnreadable}
			for i, m := range res.Matches {
				out.Matches[i] = client.GrepMatch{File: m.File, LineNumber: m.LineNumber, LineContent: m.LineContent,
					ContextBefore: m.ContextBefore, ContextAfter: m.ContextAfter}
			}
			if p == v2 {
				out.FilesCutBinary = res.FilesCutBinary
				for _, c := range res.CutBinary {
					out.BinaryCuts = append(out.BinaryCuts, client.BinaryCut{File: c.Path, LineNumber: c.Line, Offset: c.Offset})
				}
			}
			if hint := grepHint(res, b); hint != "" {
				return hinted{data: out, hint: hint}, nil
			}
			return out, nil
		})
}

// grepHint says what a grep left out and how to get it: files over the
// size cap, binary files, files searched only up to a NUL byte,
// unreadable ones, matches past the page. An answer with none of them
// says nothing.
func grepHint(res *ops.GrepResult, b *client.GrepRequest) string {
	var hints []string
	if res.FilesSkippedSize > 0 {
		hints = append(hints, sizeSkipHint(res.FilesSkippedSize, b.MaxFileSize))
	}
	if n := res.FilesSkippedBinary; n > 0 {
		what := "1 binary file (a NUL byte in its first 8 KiB) was"
		if n != 1 {
			what = strconv.Itoa(n) + " binary files (a NUL byte in the first 8 KiB) were"
		}
		hints = append(hints, what+" not searched: grep searches text; download a binary file to look inside it")
	}
	hints = append(hints, cutHint(res.FilesCutBinary, res.CutBinary))
	hints = append(hints, unreadableHint(res.FilesUnreadable, res.Unreadable, "file or directory", "files or directories"))
	if res.Truncated {
		hints = append(hints, fmt.Sprintf("more matches exist after these %d: pass offset %d for the next page (max_results sets its size), or narrow the search with path, include or type",
			len(res.Matches), b.Offset+len(res.Matches)))
	}
	return fserr.JoinHints(hints...)
}

// cutHint says that n files were searched only up to a NUL byte, naming
// the first of cuts ("" when n is 0). Their matches after it are missing
// from the answer, which without a word would read as "not there"; the
// lines from there on are often text all the same (a log with a stray
// NUL), which read returns.
func cutHint(n int, cuts []ops.BinaryCut) string {
	if n == 0 {
		return ""
	}
	what, its, them := "1 file was searched only up to a NUL byte past its first 8 KiB", "its", "the file"
	where, read := "", ""
	if n != 1 {
		what, its, them = strconv.Itoa(n)+" files were searched only up to a NUL byte past their first 8 KiB", "their", "the files"
	}
	if len(cuts) > 0 {
		c := cuts[0]
		where, read = fmt.Sprintf(" in line %d of %s", c.Line, c.Path), fmt.Sprintf(" (start_line %d)", c.Line-1)
		if n != 1 {
			where, read = ", the first"+where, fmt.Sprintf(" (start_line %d for that one)", c.Line-1)
		} else {
			where = "," + where
		}
	}
	return what + where + ": " + its + " lines from there on were not searched; read them" + read + " or download " + them + " to look inside"
}

// unreadableHint says that n paths could not be read and were left out,
// naming one ("" when n is 0): a search's silence about them would read
// as "nothing there".
func unreadableHint(n int, eg *ops.Unreadable, one, many string) string {
	if n == 0 {
		return ""
	}
	what := "1 " + one + " could not be read and was"
	if n != 1 {
		what = strconv.Itoa(n) + " " + many + " could not be read and were"
	}
	if eg != nil {
		what += fmt.Sprintf(" left out (%s: %s)", eg.Path, eg.Error)
	} else {
		what += " left out"
	}
	return what + ": make them readable to search them, or search elsewhere"
}

// sizeSkipHint says that n files were left out for their size, and how to
// search them. AIO skips files over max_file_size (1M by default) without
// a word, even a file named as path: an empty matches list then reads as
// "not there" when the text was never looked for. The cap stays AIO's;
// the hint makes the skip visible.
func sizeSkipHint(n int, maxFileSize string) string {
	if maxFileSize == "" {
		maxFileSize = ops.DefaultGrepMaxSize
	}
	what := "1 file over max_file_size (%s) was not searched"
	if n != 1 {
		what = strconv.Itoa(n) + " files over max_file_size (%s) were not searched"
	}
	return fmt.Sprintf(what+`: pass a larger max_file_size, e.g. "100M", or "0" for no limit`, maxFileSize)
}

func (s *Server) v2Find(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	path, pattern := q.str("path", true), q.str("pattern", true)
	q.str("user", false)
	if q.errs != nil {
		invalid(w, q.errs)
		return
	}
	res, err := s.find(r, path, pattern)
	if err != nil {
		fail(w, v2, "search", path, err)
		return
	}
	okHint(w, "Operation successful", res.data, res.hint)
}

// find runs a find by name; the result is hinted when entries were left
// out (too many, or unreadable).
func (s *Server) find(r *http.Request, path, pattern string) (hinted, error) {
	eng, err := s.engineFor(r)
	if err != nil {
		return hinted{}, err
	}
	res, err := eng.Find(r.Context(), ops.FindRequest{Path: path, Pattern: pattern})
	if err != nil {
		return hinted{}, err
	}
	var truncated string
	if res.Truncated {
		truncated = fmt.Sprintf("more than the %d entries returned match: narrow the pattern or the path", len(res.Files))
	}
	return hinted{data: &client.FindResult{Path: res.Path, Files: nonNil(res.Files), Truncated: res.Truncated, EntriesUnreadable: res.EntriesUnreadable},
		hint: fserr.JoinHints(unreadableHint(res.EntriesUnreadable, res.Unreadable, "directory", "directories"), truncated)}, nil
}

func (s *Server) glob(r *http.Request, b *client.GlobRequest) (any, error) {
	req := ops.GlobRequest{Path: b.Path, Pattern: b.Pattern, Exclude: b.Exclude, IncludeHidden: b.IncludeHidden,
		FilesOnly: b.FilesOnly, IncludeMetadata: b.IncludeMetadata, SortBy: b.SortBy, SortDesc: b.SortDesc}
	if b.MaxResults != nil {
		req.MaxResults = *b.MaxResults
	}
	res, err := s.eng.Glob(r.Context(), req)
	if err != nil {
		return nil, err
	}
	out := client.GlobResult{Path: res.Path, Pattern: res.Pattern, Files: make([]client.GlobFileInfo, len(res.Files)),
		TotalCount: res.TotalCount, Truncated: res.Truncated, EntriesUnreadable: res.EntriesUnreadable}
	for i, f := range res.Files {
		gf := client.GlobFileInfo{Path: f.Path, Name: f.Name, IsDirectory: f.IsDirectory, Size: f.Size}
		if f.ModifiedTime != nil {
			gf.ModifiedTime = isoTime(*f.ModifiedTime)
		}
		out.Files[i] = gf
	}
	var truncated string
	switch {
	case !res.Truncated:
	case len(res.Files) < ops.GlobMaxResults:
		truncated = fmt.Sprintf("more entries match than the %d returned: raise max_results (at most %d), or narrow the pattern or the path",
			len(res.Files), ops.GlobMaxResults)
	default:
		truncated = fmt.Sprintf("more than the %d entries returned match: narrow the pattern or the path, or exclude directories", len(res.Files))
	}
	if hint := fserr.JoinHints(unreadableHint(res.EntriesUnreadable, res.Unreadable, "directory", "directories"), truncated); hint != "" {
		return hinted{data: out, hint: hint}, nil
	}
	return out, nil
}
