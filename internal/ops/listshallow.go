package ops

import (
	"strings"

	"github.com/fsplane/fsplane/internal/workspace"
)

// listShallowFirst re-cuts cut, a recursive listing that workspace.List
// truncated depth first, so that shallower entries come before deeper
// ones: otherwise one big subdirectory sorted early pushes the rest of the
// top level out, and a reader takes the listing for the whole directory.
// It finds the deepest level whose listing fits the limit (a bisection:
// each probe is one capped workspace.List, so the cost stays a few capped
// listings whatever the tree's size), keeps all of it, and fills what is
// left with the next level's first entries. The result is in listing
// order, and reports the depth down to which it is whole.
func (e *Engine) listShallowFirst(p string, opts workspace.ListOptions, cut *workspace.Listing) (*workspace.Listing, int, error) {
	probe := func(depth int) (*workspace.Listing, error) {
		o := opts
		o.MaxDepth = depth
		return e.ws.List(p, o)
	}
	// Invariant: level lo fits (lo = 0 is the empty listing), hi does not.
	lo, hi := 0, opts.MaxDepth
	fits := &workspace.Listing{Path: cut.Path}
	over := cut
	if hi == 0 {
		// Unlimited depth: find a level that does not fit by doubling.
		for d := 1; ; d *= 2 {
			l, err := probe(d)
			if err != nil {
				return nil, 0, err
			}
			if l.Truncated {
				hi, over = d, l
				break
			}
			if deepest(l) < d {
				// The whole tree fits now: it changed since the first
				// listing.
				return l, 0, nil
			}
			lo, fits = d, l
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		l, err := probe(mid)
		if err != nil {
			return nil, 0, err
		}
		if l.Truncated {
			hi, over = mid, l
		} else {
			lo, fits = mid, l
		}
	}
	if lo == 0 {
		return over, 0, nil
	}
	// over is level hi cut depth first at the limit: its entries at depth
	// hi are the level's first ones in listing order.
	limit := opts.Limit
	if limit == 0 {
		limit = workspace.DefaultListLimit
	}
	room := max(limit-len(fits.Entries), 0)
	next := make([]workspace.Entry, 0, room)
	for _, en := range over.Entries {
		if len(next) == room {
			break
		}
		if depthOf(en.Rel) == hi {
			next = append(next, en)
		}
	}
	out := *fits
	out.Truncated = true
	out.Unreadable = max(fits.Unreadable, over.Unreadable)
	out.Entries = mergeListed(fits.Entries, next)
	return &out, lo, nil
}

// depthOf is the depth of an entry at rel: 1 for the listed directory's
// own entries.
func depthOf(rel string) int {
	return strings.Count(rel, "/") + 1
}

// deepest is the depth of l's deepest entry; 0 when l is empty.
func deepest(l *workspace.Listing) int {
	d := 0
	for _, en := range l.Entries {
		d = max(d, depthOf(en.Rel))
	}
	return d
}

// mergeListed merges two listings in listing order (names sorted, each
// directory's entries right after it) into one in that order.
func mergeListed(a, b []workspace.Entry) []workspace.Entry {
	out := make([]workspace.Entry, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if compareRel(a[0].Rel, b[0].Rel) <= 0 {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

// compareRel orders slash-separated paths as a listing does: by name
// component by component, a directory before what it holds.
func compareRel(x, y string) int {
	for {
		xn, xrest, xmore := strings.Cut(x, "/")
		yn, yrest, ymore := strings.Cut(y, "/")
		if c := strings.Compare(xn, yn); c != 0 {
			return c
		}
		switch {
		case !xmore && !ymore:
			return 0
		case !xmore:
			return -1
		case !ymore:
			return 1
		}
		x, y = xrest, yrest
	}
}
