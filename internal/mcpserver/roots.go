//lint:file-ignore SA1019 MCP roots are deprecated from protocol 2026-07-28 on, which this server does not speak (see sessionProtocolVersions); issue 7 requires honouring them.

package mcpserver

import (
	"context"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/fsplane/fsplane/internal/fserr"
)

// loadRoots makes sure c.sess knows the client's roots (see the package
// doc for the rule). It fails closed: a client that advertises roots but
// fails to answer roots/list keeps the roots it last gave, or, when it
// never gave any, has its call refused (and is asked again on the next
// one) — never the whole allowed set, which would widen a session the
// client meant to narrow.
func (c *Call) loadRoots(ctx context.Context) error {
	st := c.sess
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.rootsKnown || c.srv.opts.IgnoreClientRoots {
		return nil
	}
	ip := c.Session.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.RootsV2 == nil {
		st.rootsKnown = true
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, rootsTimeout)
	defer cancel()
	res, err := c.Session.ListRoots(ctx, nil)
	if err != nil {
		if st.listed {
			// Asked again after the next list_changed.
			c.srv.log.Warn("Client roots unavailable; keeping the roots it gave before", "session", st.caller, "err", err)
			st.rootsKnown = true
			return nil
		}
		c.srv.log.Warn("Client roots unavailable; refusing the call", "session", st.caller, "err", err)
		return fserr.New(fserr.OutsideRoot, "roots", "", "the client advertises MCP roots but did not answer roots/list (%v), so this session's roots are unknown", err).
			WithHint("answer roots/list, or connect without the roots capability to use every root fsplane allows")
	}
	st.listed = true
	st.rootsKnown = true
	var given []string
	for _, r := range res.Roots {
		if r != nil {
			given = append(given, r.URI)
		}
	}
	st.clientList = given
	st.restricted = len(given) > 0
	st.roots = c.srv.intersect(given)
	c.srv.log.Info("Client roots", "session", st.caller, "client", strings.Join(given, ","), "effective", strings.Join(st.roots, ","))
	return nil
}

// intersect returns the part of the allowed set that the client's roots
// (URIs) cover: a client root inside an allowed root (resolved, links
// followed), and an allowed root inside a client root.
func (s *Server) intersect(uris []string) []string {
	ws := s.eng.Workspace()
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, u := range uris {
		p, ok := fileURIPath(u)
		if !ok {
			continue
		}
		if r, err := ws.Resolve(p); err == nil {
			add(r.Abs)
			continue
		}
		for _, a := range ws.Roots() {
			if _, in := within(a, p); in {
				add(a)
			}
		}
	}
	return out
}

// fileURIPath returns the absolute, cleaned path of a file:// URI.
func fileURIPath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || !filepath.IsAbs(u.Path) {
		return "", false
	}
	return filepath.Clean(u.Path), true
}

// within reports whether the cleaned absolute path p lies in base and
// returns the rest ("." for base itself).
func within(p, base string) (string, bool) {
	switch {
	case p == base:
		return ".", true
	case base == "/":
		return p[1:], true
	case strings.HasPrefix(p, base) && len(p) > len(base) && p[len(base)] == '/':
		return p[len(base)+1:], true
	}
	return "", false
}

// roots returns the roots the session may touch, in order.
func (c *Call) roots() []string {
	c.sess.mu.Lock()
	defer c.sess.mu.Unlock()
	if c.sess.restricted {
		return slices.Clone(c.sess.roots)
	}
	return c.srv.eng.Workspace().Roots()
}

// Path maps a path argument to the path to hand to ops: unchanged when the
// session may touch every allowed root; otherwise made absolute against
// the session's first root and checked to resolve (links followed) inside
// one of its roots. Errors are outside_root.
//
// The check happens before ops opens the file, so a symbolic link swapped
// in between could redirect the call to another allowed root — never
// outside the allowed set, which os.Root guards.
func (c *Call) Path(op, p string) (string, error) {
	c.sess.mu.Lock()
	restricted, roots, client := c.sess.restricted, c.sess.roots, c.sess.clientList
	c.sess.mu.Unlock()
	if !restricted {
		return p, nil
	}
	if len(roots) == 0 {
		return "", fserr.New(fserr.OutsideRoot, op, p,
			"none of the client's roots (%s) lies inside the roots this server allows (%s), so no path can be used",
			strings.Join(client, ", "), strings.Join(c.srv.eng.Workspace().Roots(), ", ")).
			WithHint("ask the user to add a root inside the allowed roots, or to start fsplane mcp with --root covering the project")
	}
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return p, nil // ops reports empty paths and NUL bytes
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(roots[0], abs)
	}
	r, err := c.srv.eng.Workspace().Resolve(abs)
	if err != nil {
		return "", fserr.From(op, p, err)
	}
	for _, root := range roots {
		if _, in := within(r.Abs, root); in {
			return abs, nil
		}
	}
	return "", fserr.New(fserr.OutsideRoot, op, p, "path %s is outside this session's roots (%s)", p, strings.Join(roots, ", ")).
		WithHint("use a path inside one of the roots; relative paths start at %s", roots[0])
}

// base is the directory that searches and listings start from when no
// path is given: the session's first root.
func (c *Call) base() string {
	if rs := c.roots(); len(rs) > 0 {
		return rs[0]
	}
	return "."
}

// display renders an absolute path for a model: relative to the session's
// first root when inside it (relative paths resolve there), else absolute.
func (c *Call) display(abs string) string {
	base := ""
	if rs := c.roots(); len(rs) > 0 {
		base = rs[0]
	}
	return displayUnder(abs, base)
}

// displayUnder renders abs relative to base when inside it ("" for none),
// else absolute.
func displayUnder(abs, base string) string {
	if rel, ok := within(abs, base); ok && base != "" {
		return filepath.ToSlash(rel)
	}
	return abs
}

// textName is a displayed name as a line of text shows it: quoted with Go
// escapes when it has a control character (a newline, a carriage return,
// an escape). Raw, a file named "x\na.go:1:fake" would add a line of its
// own making to a grep's or a listing's text; structured results keep the
// name as it is.
func textName(name string) string {
	if strings.ContainsFunc(name, unicode.IsControl) {
		return strconv.Quote(name)
	}
	return name
}
