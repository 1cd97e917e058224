package httpapi

import (
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/ops"
)

// fsRoutes registers stat, list, mkdir, copy, move and delete on both
// planes, and the undo history listing. v2 reads its arguments from the
// query (GET) or body (POST); v1 always from the body.
func (s *Server) fsRoutes() {
	s.handle(route{Method: "GET", Path: "/v2/fs/stat", Summary: "Describe a path", Tag: "v2",
		Query: typeOf[client.StatQuery](), Data: typeOf[client.StatResult](), Statuses: []int{403, 404}}, s.v2Stat)
	s.handle(route{Method: "GET", Path: "/v2/fs/list", Summary: "List a directory", Tag: "v2",
		Query: typeOf[client.ListQuery](), Data: typeOf[client.ListResult](), Statuses: []int{400, 403, 404}}, s.v2List)
	s.handle(route{Method: "GET", Path: "/v2/fs/undo", Summary: "A file's recorded changes, newest first (extension)", Tag: "v2",
		Query: typeOf[client.UndoHistoryQuery](), Data: typeOf[client.UndoHistory](), Statuses: []int{400, 403}}, s.v2UndoHistory)
	for _, p := range []plane{v2, v1} {
		prefix, tag := "/v2/fs/", "v2"
		if p == v1 {
			if s.opts.Surface == "v2" {
				break
			}
			prefix, tag = "/v1/file/", "v1"
		}
		// v2's mkdir and copy take ?user= (the owner of what they
		// create), as AIO's v2 routes do; v1 has no such parameter.
		var userQuery reflect.Type
		if p == v2 {
			userQuery = typeOf[client.UserQuery]()
		}
		s.handle(p.failures(route{Method: "POST", Path: prefix + "mkdir", Summary: "Create a directory", Tag: tag,
			Query: userQuery, Body: typeOf[client.MkdirRequest](), Data: typeOf[client.MkdirResult]()}, 403, 404, 409), s.mkdir(p))
		s.handle(p.failures(route{Method: "POST", Path: prefix + "copy", Summary: "Copy a file or directory tree", Tag: tag,
			Query: userQuery, Body: typeOf[client.CopyRequest](), Data: typeOf[client.CopyResult]()}, 400, 403, 404, 409), s.copyFile(p))
		s.handle(p.failures(route{Method: "POST", Path: prefix + "move", Summary: "Move or rename", Tag: tag,
			Body: typeOf[client.MoveRequest](), Data: typeOf[client.MoveResult]()}, 400, 403, 404, 409), s.move(p))
		s.handle(p.failures(route{Method: "POST", Path: prefix + "delete", Summary: "Delete a file, link or directory", Tag: tag,
			Body: typeOf[client.DeleteRequest](), Data: typeOf[client.DeleteResult]()}, 400, 403, 404, 409), s.remove(p))
	}
	if s.opts.Surface != "v2" {
		s.handle(route{Method: "POST", Path: "/v1/file/stat", Summary: "Describe a path", Tag: "v1",
			Body: typeOf[client.V1StatRequest](), Data: typeOf[client.StatResult](), FailOK: true}, s.v1Stat)
		s.handle(route{Method: "POST", Path: "/v1/file/list", Summary: "List a directory", Tag: "v1",
			Body: typeOf[client.V1ListRequest](), Data: typeOf[client.ListResult](), FailOK: true}, s.v1List)
	}
}

func isoTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

func (s *Server) stat(w http.ResponseWriter, r *http.Request, p plane, path string, follow bool) {
	eng, err := s.engineFor(r)
	if err != nil {
		fail(w, p, "stat", path, err)
		return
	}
	res, err := eng.Stat(r.Context(), ops.StatRequest{Path: path, FollowSymlinks: follow})
	if err != nil {
		fail(w, p, "stat", path, err)
		return
	}
	ok(w, "Operation successful", client.StatResult{Path: res.Path, Size: res.Size, Permissions: res.Permissions,
		IsDirectory: res.IsDirectory, IsSymlink: res.IsSymlink, ModifiedTime: isoTime(res.ModTime), Version: res.Version})
}

func (s *Server) v2Stat(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	path := q.str("path", true)
	follow := q.boolean("follow_symlinks", true)
	if q.errs != nil {
		invalid(w, q.errs)
		return
	}
	s.stat(w, r, v2, path, follow)
}

func (s *Server) v1Stat(w http.ResponseWriter, r *http.Request) {
	var b client.V1StatRequest
	if errs := decode(r, &b, bodyRules{}); len(errs) > 0 {
		invalid(w, errs)
		return
	}
	follow := b.FollowSymlinks == nil || *b.FollowSymlinks
	s.stat(w, r, v1, b.Path, follow)
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, p plane, lp client.V1ListRequest) {
	req := ops.ListRequest{Path: lp.Path, Recursive: lp.Recursive, ShowHidden: lp.ShowHidden == nil || *lp.ShowHidden, FileTypes: lp.FileTypes}
	if lp.MaxDepth != nil {
		req.MaxDepth = *lp.MaxDepth
	}
	eng, err := s.engineFor(r)
	if err != nil {
		fail(w, p, "list", lp.Path, err)
		return
	}
	res, err := eng.List(r.Context(), req)
	if err != nil {
		fail(w, p, "list", lp.Path, err)
		return
	}
	out := client.ListResult{Path: res.Path, Files: make([]client.FileInfo, 0, len(res.Entries)), Truncated: res.Truncated,
		DirectoryCount: res.Dirs, FileCount: res.Files}
	withSize := lp.IncludeSize == nil || *lp.IncludeSize
	items := make([]listItem, 0, len(res.Entries))
	for _, e := range res.Entries {
		fi := client.FileInfo{Name: e.Name, Path: e.Path, IsDirectory: e.IsDir, ModifiedTime: isoTime(e.ModTime), IsHidden: e.Hidden, IsSymlink: e.IsSymlink}
		it := listItem{mod: e.ModTime}
		if !e.IsDir {
			it.size = e.Size
			if withSize {
				size := e.Size
				fi.Size = &size
			}
		}
		if e.Extension != "" {
			ext := e.Extension
			fi.Extension = &ext
		}
		if lp.IncludePermissions {
			perm := fmt.Sprintf("%o", e.Mode.Perm())
			fi.Permissions = &perm
		}
		it.info = fi
		items = append(items, it)
	}
	sortListing(items, lp.SortBy, lp.SortDesc)
	for _, it := range items {
		out.Files = append(out.Files, it.info)
	}
	out.TotalCount = len(out.Files)
	okHint(w, "Operation successful", out, listHint(r, p, res.Truncated, lp.Recursive, len(out.Files)))
}

// listHint says how to reach what a listing cut at its cap (AIO's 10,000
// entries) left out, as find, glob and grep say it of theirs: the answer
// alone reads as the whole directory. "" for a listing that is whole. The
// find route named is the one beside r's (a host's, through the hub).
func listHint(r *http.Request, p plane, truncated, recursive bool, n int) string {
	if !truncated {
		return ""
	}
	find := "POST /v1/file/find"
	if p == v2 {
		route := r.URL.Path
		find = "GET " + route[:strings.LastIndexByte(route, '/')+1] + "search"
	}
	narrow := ""
	if recursive {
		narrow = "list a subdirectory, set a lower max_depth, or "
	}
	return fmt.Sprintf("more entries exist than the %d returned: %sfind files by name with a pattern (%s)", n, narrow, find)
}

// listItem is one listed entry with the keys it sorts by: the time and
// size themselves, not their wire forms (modified_time's RFC 3339 text
// drops trailing zeros of the fraction, so it does not sort as the times
// do; size is null without include_size, and for directories).
type listItem struct {
	info client.FileInfo
	mod  time.Time
	size int64 // 0 for a directory
}

// sortListing orders entries by name (default), size, modified or type.
func sortListing(items []listItem, by string, desc bool) {
	less := func(a, b listItem) bool { return a.info.Path < b.info.Path }
	switch by {
	case "size":
		less = func(a, b listItem) bool { return a.size < b.size }
	case "modified":
		less = func(a, b listItem) bool { return a.mod.Before(b.mod) }
	case "type":
		less = func(a, b listItem) bool {
			if a.info.IsDirectory != b.info.IsDirectory {
				return a.info.IsDirectory
			}
			if ea, eb := deref(a.info.Extension), deref(b.info.Extension); ea != eb {
				return ea < eb
			}
			return a.info.Path < b.info.Path
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		if desc {
			return less(items[j], items[i])
		}
		return less(items[i], items[j])
	})
}

var sortKeys = map[string]bool{"": true, "name": true, "size": true, "modified": true, "type": true}

func (s *Server) v2List(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	lp := client.V1ListRequest{Path: q.str("path", true), Recursive: q.boolean("recursive", false), MaxDepth: q.intp("max_depth", 0)}
	hidden := q.boolean("show_hidden", true)
	lp.ShowHidden = &hidden
	q.str("user", false)
	if q.errs != nil {
		invalid(w, q.errs)
		return
	}
	s.list(w, r, v2, lp)
}

func (s *Server) v1List(w http.ResponseWriter, r *http.Request) {
	var b client.V1ListRequest
	errs := decode(r, &b, bodyRules{})
	if !sortKeys[b.SortBy] {
		errs = append(errs, client.ValidationError{Location: []string{"body", "sort_by"}, Message: "sort_by must be name, size, modified or type", Type: "value_error.enum"})
	}
	errs = append(errs, nonNegative("max_depth", b.MaxDepth)...)
	if len(errs) > 0 {
		invalid(w, errs)
		return
	}
	s.list(w, r, v1, b)
}

func (s *Server) v2UndoHistory(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	p := q.str("path", true)
	if q.errs != nil {
		invalid(w, q.errs)
		return
	}
	hist, err := s.eng.UndoHistory(r.Context(), p)
	if err != nil {
		fail(w, v2, "undo", p, err)
		return
	}
	out := client.UndoHistory{Path: p, Entries: []client.UndoEntry{}}
	for _, e := range hist.Entries {
		out.Entries = append(out.Entries, client.UndoEntry{Op: e.Op, Time: e.Time.UTC().Format(time.RFC3339Nano), PrevExisted: e.PrevExisted, PrevSize: e.PrevSize})
	}
	ok(w, "Operation successful", out)
}

// bodyRoute is the common shape of a JSON-body route: decode and validate
// a B, run the operation, answer with its data or the failure.
func bodyRoute[B any](p plane, op string, pathOf func(*B) string, run func(*http.Request, *B) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b B
		if errs := decode(r, &b, bodyRules{}); len(errs) > 0 {
			invalid(w, errs)
			return
		}
		res, err := run(r, &b)
		if err != nil {
			fail(w, p, op, pathOf(&b), err)
			return
		}
		if h, isHinted := res.(hinted); isHinted {
			okHint(w, "Operation successful", h.data, h.hint)
			return
		}
		ok(w, "Operation successful", res)
	}
}

// hinted is a bodyRoute result whose envelope carries a hint.
type hinted struct {
	data any
	hint string
}

func (s *Server) mkdir(p plane) http.HandlerFunc {
	return bodyRoute(p, "mkdir", func(b *client.MkdirRequest) string { return b.Path },
		func(r *http.Request, b *client.MkdirRequest) (any, error) {
			res, err := s.eng.Mkdir(r.Context(), ops.MkdirRequest{Path: b.Path, Parents: b.Parents, User: s.planeUser(p, r)})
			if err != nil {
				return nil, err
			}
			return client.MkdirResult{Path: res.Path, Created: res.Created}, nil
		})
}

func (s *Server) copyFile(p plane) http.HandlerFunc {
	return bodyRoute(p, "copy", func(b *client.CopyRequest) string { return b.Source },
		func(r *http.Request, b *client.CopyRequest) (any, error) {
			res, err := s.eng.Copy(r.Context(), ops.CopyRequest{Source: b.Source, Destination: b.Destination, Overwrite: b.Overwrite, User: s.planeUser(p, r)})
			if err != nil {
				return nil, err
			}
			undo, hint := undoNote(res.UndoRecorded, entryWhy(res.IsDirectory))
			return hinted{client.CopyResult{Source: res.Source, Destination: res.Destination, FilesCopied: res.FilesCopied, BytesCopied: res.BytesCopied,
				LinksCopied: res.LinksCopied, LinksSkipped: res.LinksSkipped, OtherSkipped: res.OtherSkipped, UndoRecorded: undo}, fserr.JoinHints(res.Skipped(), hint)}, nil
		})
}

func (s *Server) move(p plane) http.HandlerFunc {
	return bodyRoute(p, "move", func(b *client.MoveRequest) string { return b.Source },
		func(r *http.Request, b *client.MoveRequest) (any, error) {
			res, err := s.eng.Move(r.Context(), ops.MoveRequest{Source: b.Source, Destination: b.Destination, Overwrite: b.Overwrite, ExpectedVersion: b.ExpectedVersion})
			if err != nil {
				return nil, err
			}
			undo, hint := undoNote(res.UndoRecorded, entryWhy(res.IsDirectory))
			return hinted{client.MoveResult{Source: res.Source, Destination: res.Destination, Version: res.Version, UndoRecorded: undo}, hint}, nil
		})
}

func (s *Server) remove(p plane) http.HandlerFunc {
	return bodyRoute(p, "delete", func(b *client.DeleteRequest) string { return b.Path },
		func(r *http.Request, b *client.DeleteRequest) (any, error) {
			res, err := s.eng.Delete(r.Context(), ops.DeleteRequest{Path: b.Path, Recursive: b.Recursive, ExpectedVersion: b.ExpectedVersion})
			if err != nil {
				return nil, err
			}
			undo, hint := undoNote(res.UndoRecorded, entryWhy(res.IsDirectory))
			return hinted{client.DeleteResult{Path: res.Path, IsDirectory: res.IsDirectory, UndoRecorded: undo}, hint}, nil
		})
}

// user is the ownership identity of a request: ?user= (v2), else none
// (the engine applies the default user).
func (s *Server) user(r *http.Request) string {
	return strings.TrimSpace(queryValues(r).Get("user"))
}

// planeUser is ?user= on v2 routes; v1 routes have no such parameter and
// ignore one sent.
func (s *Server) planeUser(p plane, r *http.Request) string {
	if p != v2 {
		return ""
	}
	return s.user(r)
}
