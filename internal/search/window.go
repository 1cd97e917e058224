package search

import (
	"regexp/syntax"
	"unicode/utf8"
)

// window is a cheap necessary condition on the bytes around a literal
// hit: when the pattern is a concatenation whose required literal is one
// of its parts, the parts just before and after it are often character
// classes of fixed width (`\w{5}\s+\w{5}\(`: five word characters, then
// at least one space, before the "("). Checking those bytes before
// running the regexp rejects most hits of a common literal such as "(".
// It is conservative: a byte >= 0x80 (whose character the check cannot
// count) accepts, and it only looks as far as the fixed-width parts go.
type window struct {
	back []*byteClass // back[0] is the byte just before the literal
	fwd  []*byteClass // fwd[0] is the byte just after it
}

// byteClass is the set of ASCII bytes a class matches. '\n' is never in
// it: in line mode no match contains one.
type byteClass [2]uint64

func (c *byteClass) has(b byte) bool { return c[b>>6]&(1<<(b&63)) != 0 }

func classOf(re *syntax.Regexp) (*byteClass, bool) {
	var c byteClass
	switch re.Op {
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1] && r < utf8.RuneSelf; r++ {
				c[r>>6] |= 1 << (r & 63)
			}
		}
	case syntax.OpLiteral:
		if len(re.Rune) != 1 || re.Rune[0] >= utf8.RuneSelf || re.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		r := re.Rune[0]
		c[r>>6] |= 1 << (r & 63)
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		c = byteClass{^uint64(0), ^uint64(0)}
	default:
		return nil, false
	}
	c[0] &^= 1 << '\n'
	return &c, true
}

// windowFor builds the check for the literal lit in tree (parsed in line
// mode), or returns nil when lit is not a plain part of a top-level
// concatenation.
func windowFor(tree *syntax.Regexp, lit string) *window {
	for tree.Op == syntax.OpCapture {
		tree = tree.Sub[0]
	}
	if tree.Op != syntax.OpConcat {
		return nil
	}
	k := -1
	for i, sub := range tree.Sub {
		if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 && string(sub.Rune) == lit {
			k = i
			break
		}
	}
	if k < 0 {
		return nil
	}
	w := &window{}
	// items expands the parts after (dir 1) or before (dir -1) the
	// literal into one class per byte, stopping at the first part of
	// unknown width (after its minimum).
	items := func(from, dir int) []*byteClass {
		var out []*byteClass
		for i := from; i >= 0 && i < len(tree.Sub) && len(out) < 64; i += dir {
			sub := tree.Sub[i]
			for sub.Op == syntax.OpCapture {
				sub = sub.Sub[0]
			}
			switch sub.Op {
			case syntax.OpLiteral:
				if sub.Flags&syntax.FoldCase != 0 {
					return out
				}
				s := []byte(string(sub.Rune))
				for j := range s {
					b := s[j]
					if dir < 0 {
						b = s[len(s)-1-j]
					}
					if b >= utf8.RuneSelf {
						return out
					}
					var c byteClass
					c[b>>6] |= 1 << (b & 63)
					out = append(out, &c)
				}
				continue
			case syntax.OpCharClass, syntax.OpAnyCharNotNL:
				c, _ := classOf(sub)
				out = append(out, c)
				continue
			case syntax.OpRepeat, syntax.OpPlus:
				c, ok := classOf(sub.Sub[0])
				if !ok {
					return out
				}
				min, fixed := 1, false
				if sub.Op == syntax.OpRepeat {
					min, fixed = sub.Min, sub.Min == sub.Max
				}
				for range min {
					out = append(out, c)
				}
				if fixed {
					continue
				}
			}
			return out
		}
		return out
	}
	w.back = items(k-1, -1)
	w.fwd = items(k+1, 1)
	if len(w.back)+len(w.fwd) == 0 {
		return nil
	}
	return w
}

// ok checks the bytes around a hit of the literal at buf[at:at+n], within
// the line buf[ls:le].
func (w *window) ok(buf []byte, at, n, ls, le int) bool {
	for i, c := range w.back {
		p := at - 1 - i
		if p < ls {
			return false
		}
		b := buf[p]
		if b >= utf8.RuneSelf {
			return true // cannot count characters from here on
		}
		if !c.has(b) {
			return false
		}
	}
	for i, c := range w.fwd {
		p := at + n + i
		if p >= le {
			return false
		}
		b := buf[p]
		if b >= utf8.RuneSelf {
			return true
		}
		if !c.has(b) {
			return false
		}
	}
	return true
}
