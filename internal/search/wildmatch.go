package search

// This file implements git's wildmatch semantics (the glob dialect of
// .gitignore lines), written from git's documented behaviour:
//
//   - '?' matches one byte other than '/'; '*' matches any run of bytes
//     without '/'.
//   - "**" matches across '/' only as a whole path component: at the start
//     or after '/', and at the end or before '/'. "**/" also matches zero
//     directories ("a/**/b" matches "a/b"). Anywhere else "**" is '*'.
//   - "[...]" is a byte class: '!' or '^' first negates it, "a-z" ranges,
//     "[:alpha:]"-style POSIX classes, '\' escapes, a ']' right after the
//     opening (or the negation) is literal; a class never matches '/'.
//     An unterminated class matches nothing.
//   - '\' makes the next byte literal.
//
// Without pathname mode (used for basename patterns) '*' also matches
// '/', which cannot occur in a basename anyway.

// wmResult is the outcome of one matching attempt. The two abort results
// let a caller's star loop stop early: abortAll means no shift of any
// enclosing star can match, abortStarStar means only an enclosing "**"
// (which can cross '/') might still. Returning them wherever they apply
// (as git's wildmatch does, and rsync's before it) is what keeps matching
// polynomial: a star whose loop ran out tells every enclosing star to
// stop instead of letting each of them retry it at every later position,
// which on "*a*a*a*a*b" against a long run of 'a' is exponential in the
// number of stars.
type wmResult uint8

const (
	wmMatch wmResult = iota
	wmNoMatch
	wmAbortAll
	wmAbortStarStar
)

// wildmatch reports whether text matches pattern.
func wildmatch(pattern, text string, pathname bool) bool {
	ok, _ := wildmatchSteps(pattern, text, pathname)
	return ok
}

// wildmatchSteps is wildmatch that also tells how many matching attempts
// (calls of wild) it took, the measure of its cost that tests bound.
func wildmatchSteps(pattern, text string, pathname bool) (ok bool, steps int) {
	m := wm{p: pattern, t: text, pathname: pathname}
	return m.wild(0, 0) == wmMatch, m.steps
}

// wm is one match of pattern p against text t.
type wm struct {
	p, t     string
	pathname bool
	steps    int
}

func isGlobSpecial(c byte) bool { return c == '*' || c == '?' || c == '[' || c == '\\' }

// wild matches p[pi:] against t[ti:].
func (m *wm) wild(pi, ti int) wmResult {
	m.steps++
	p, t := m.p, m.t
	for ; pi < len(p); pi, ti = pi+1, ti+1 {
		pc := p[pi]
		if ti >= len(t) && pc != '*' {
			return wmAbortAll
		}
		switch pc {
		case '\\':
			pi++
			if pi >= len(p) || t[ti] != p[pi] {
				// A trailing backslash matches nothing.
				return wmNoMatch
			}
		case '?':
			if m.pathname && t[ti] == '/' {
				return wmNoMatch
			}
		case '*':
			r, done, nti := m.star(&pi, ti)
			if done {
				return r
			}
			// The star consumed everything up to the next '/'; the loop
			// matches that '/' next.
			ti = nti
		case '[':
			ok, npi, valid := matchClass(p, pi, t[ti], m.pathname)
			if !valid {
				return wmAbortAll
			}
			if !ok {
				return wmNoMatch
			}
			pi = npi
		default:
			if t[ti] != pc {
				return wmNoMatch
			}
		}
	}
	if ti < len(t) {
		return wmNoMatch
	}
	return wmMatch
}

// star handles a run of '*' starting at p[*pi]. It either decides the
// whole match (done) or, for a single star followed by '/', moves *pi to
// the byte before that '/' and returns the text index of the next '/'
// minus one, so the caller's loop continues there.
func (m *wm) star(pi *int, ti int) (res wmResult, done bool, nti int) {
	p, t, pathname := m.p, m.t, m.pathname
	start := *pi
	i := start + 1
	matchSlash := !pathname
	if i < len(p) && p[i] == '*' {
		for i < len(p) && p[i] == '*' {
			i++
		}
		if !pathname {
			matchSlash = true
		} else if (start == 0 || p[start-1] == '/') &&
			(i == len(p) || p[i] == '/' || (p[i] == '\\' && i+1 < len(p) && p[i+1] == '/')) {
			// "**/" may match no directory at all. If the rest cannot
			// match here or anywhere later (abortAll), the loop below,
			// which tries it only later, cannot either: without this
			// stop a run of "**/" is exponential.
			if i < len(p) && p[i] == '/' {
				if r := m.wild(i+1, ti); r == wmMatch || r == wmAbortAll {
					return r, true, 0
				}
			}
			matchSlash = true
		} else {
			matchSlash = false
		}
	}
	if i == len(p) {
		// A trailing "**" matches everything, a trailing '*' the rest of
		// this component.
		if !matchSlash && indexByteFrom(t, ti, '/') >= 0 {
			return wmNoMatch, true, 0
		}
		return wmMatch, true, 0
	}
	if !matchSlash && p[i] == '/' {
		s := indexByteFrom(t, ti, '/')
		if s < 0 {
			return wmNoMatch, true, 0
		}
		*pi = i - 1
		return 0, false, s - 1
	}
	for ti < len(t) {
		if !isGlobSpecial(p[i]) {
			// Skip ahead to the next occurrence of the literal that
			// follows the star; nothing before it can start a match.
			c := p[i]
			for ti < len(t) && (matchSlash || t[ti] != '/') && t[ti] != c {
				ti++
			}
			if ti >= len(t) {
				return wmAbortAll, true, 0
			}
			if t[ti] != c {
				// Stopped at a '/' this star cannot cross: what the
				// loop would have returned there.
				return wmAbortStarStar, true, 0
			}
		}
		r := m.wild(i, ti)
		if r != wmNoMatch {
			if !matchSlash || r != wmAbortStarStar {
				return r, true, 0
			}
		} else if !matchSlash && t[ti] == '/' {
			return wmAbortStarStar, true, 0
		}
		ti++
	}
	return wmAbortAll, true, 0
}

func indexByteFrom(s string, from int, c byte) int {
	for i := from; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// matchClass matches c against the class starting at p[pi] == '['. It
// returns whether c is in the class, the index of the closing ']', and
// valid=false when the class is malformed (unterminated or an unknown
// [:name:]), which makes the whole pattern match nothing.
func matchClass(p string, pi int, c byte, pathname bool) (ok bool, end int, valid bool) {
	i := pi + 1
	at := func(k int) byte {
		if k < len(p) {
			return p[k]
		}
		return 0
	}
	pc := at(i)
	if pc == '^' {
		pc = '!'
	}
	negated := pc == '!'
	if negated {
		i++
		pc = at(i)
	}
	var prev byte
	matched := false
	for {
		if pc == 0 && i >= len(p) {
			return false, 0, false
		}
		switch {
		case pc == '\\':
			i++
			if i >= len(p) {
				return false, 0, false
			}
			pc = p[i]
			if c == pc {
				matched = true
			}
		case pc == '-' && prev != 0 && i+1 < len(p) && p[i+1] != ']':
			i++
			pc = p[i]
			if pc == '\\' {
				i++
				if i >= len(p) {
					return false, 0, false
				}
				pc = p[i]
			}
			if c <= pc && c >= prev {
				matched = true
			}
			pc = 0 // a range cannot start a range
		case pc == '[' && at(i+1) == ':':
			s := i + 2
			j := s
			for j < len(p) && p[j] != ']' {
				j++
			}
			if j >= len(p) {
				return false, 0, false
			}
			if j-s-1 < 0 || p[j-1] != ':' {
				// Not "[:name:]": a literal '[' and go on after it.
				if c == '[' {
					matched = true
				}
				pc = '['
				break
			}
			in, known := posixClass(p[s:j-1], c)
			if !known {
				return false, 0, false
			}
			if in {
				matched = true
			}
			i = j
			pc = 0
		default:
			if c == pc {
				matched = true
			}
		}
		prev = pc
		i++
		if i >= len(p) {
			return false, 0, false
		}
		pc = p[i]
		if pc == ']' {
			break
		}
	}
	if matched == negated || (pathname && c == '/') {
		return false, i, true
	}
	return true, i, true
}

func posixClass(name string, c byte) (in, known bool) {
	isUpper := c >= 'A' && c <= 'Z'
	isLower := c >= 'a' && c <= 'z'
	isDigit := c >= '0' && c <= '9'
	isAlpha := isUpper || isLower
	isSpace := c == ' ' || (c >= '\t' && c <= '\r')
	isPrint := c >= 0x20 && c < 0x7f
	isGraph := c > 0x20 && c < 0x7f
	switch name {
	case "alnum":
		return isAlpha || isDigit, true
	case "alpha":
		return isAlpha, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return isDigit, true
	case "graph":
		return isGraph, true
	case "lower":
		return isLower, true
	case "print":
		return isPrint, true
	case "punct":
		return isGraph && !isAlpha && !isDigit, true
	case "space":
		return isSpace, true
	case "upper":
		return isUpper, true
	case "xdigit":
		return isDigit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}
