package search

// refWild is the matcher as it was before the abort returns were fixed
// (exponential on "*a*a*a*b"): the reference whose answers the fixed one
// must keep.
func refWild(p string, pi int, t string, ti int, pathname bool) wmResult {
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
			if pathname && t[ti] == '/' {
				return wmNoMatch
			}
		case '*':
			r, done, nti := refStar(p, &pi, t, ti, pathname)
			if done {
				return r
			}
			// The star consumed everything up to the next '/'; the loop
			// matches that '/' next.
			ti = nti
		case '[':
			ok, npi, valid := matchClass(p, pi, t[ti], pathname)
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

func refStar(p string, pi *int, t string, ti int, pathname bool) (res wmResult, done bool, nti int) {
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
			// "**/" may match no directory at all.
			if i < len(p) && p[i] == '/' && refWild(p, i+1, t, ti, pathname) == wmMatch {
				return wmMatch, true, 0
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
			if ti >= len(t) || t[ti] != c {
				return wmNoMatch, true, 0
			}
		}
		r := refWild(p, i, t, ti, pathname)
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
