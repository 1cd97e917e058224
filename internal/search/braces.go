package search

import "errors"

// maxBraceAlternatives bounds what one glob expands to: "{a,b}" repeated
// multiplies, and a glob is a filter, not a word list.
const maxBraceAlternatives = 1024

// expandBraces expands the {a,b} alternatives of a ripgrep -g glob into
// the globs they stand for, in order: "*.{go,md}" is "*.go" then "*.md".
// Gitignore syntax has no braces, so the filter built from the globs
// (gitignore lines) gets one line per alternative. Alternatives nest
// ("{a,{b,c}d}"); '\' escapes a brace or a comma (and stays, for the
// matcher to read as a literal); braces inside a [...] class are
// literal; a ',' or '}' outside braces is literal, as in ripgrep. An
// unclosed '{' is an error: it would otherwise match nothing, silently.
func expandBraces(g string) ([]string, error) {
	out, _, err := braceSeq(g, 0, false)
	return out, err
}

// braceSeq expands s[i:] up to the end or, when nested, up to the ',' or
// '}' that ends the current alternative; it returns the expansions and
// where it stopped.
func braceSeq(s string, i int, nested bool) ([]string, int, error) {
	out := []string{""}
	lit := func(t string) {
		for k := range out {
			out[k] += t
		}
	}
	for i < len(s) {
		switch c := s[i]; {
		case c == '\\':
			end := min(i+2, len(s))
			lit(s[i:end])
			i = end
		case c == '[':
			end := classEnd(s, i)
			lit(s[i:end])
			i = end
		case c == '{':
			alts, end, err := braceGroup(s, i+1)
			if err != nil {
				return nil, 0, err
			}
			if len(out)*len(alts) > maxBraceAlternatives {
				return nil, 0, errors.New("more than 1024 alternatives")
			}
			next := make([]string, 0, len(out)*len(alts))
			for _, o := range out {
				for _, a := range alts {
					next = append(next, o+a)
				}
			}
			out, i = next, end
		case nested && (c == ',' || c == '}'):
			return out, i, nil
		default:
			lit(s[i : i+1])
			i++
		}
	}
	if nested {
		return nil, 0, errors.New(`unclosed "{"`)
	}
	return out, i, nil
}

// braceGroup expands the alternatives of the group that starts at s[i]
// (just after its '{') and returns them and the index after its '}'.
func braceGroup(s string, i int) ([]string, int, error) {
	var alts []string
	for {
		seq, end, err := braceSeq(s, i, true)
		if err != nil {
			return nil, 0, err
		}
		alts = append(alts, seq...)
		if len(alts) > maxBraceAlternatives {
			return nil, 0, errors.New("more than 1024 alternatives")
		}
		if s[end] == '}' {
			return alts, end + 1, nil
		}
		i = end + 1 // past the ','
	}
}

// classEnd returns the index after the class that starts at s[i] ('['),
// read as wildmatch reads it: a '!' or '^' first negates, a ']' right
// after that is literal, '\' escapes, "[:name:]" is a POSIX class. An
// unterminated class runs to the end (it matches nothing).
func classEnd(s string, i int) int {
	j := i + 1
	if j < len(s) && (s[j] == '!' || s[j] == '^') {
		j++
	}
	if j < len(s) && s[j] == ']' {
		j++
	}
	for j < len(s) {
		switch {
		case s[j] == '\\':
			j += 2
		case s[j] == '[' && j+1 < len(s) && s[j+1] == ':':
			k := j + 2
			for k+1 < len(s) && !(s[k] == ':' && s[k+1] == ']') {
				k++
			}
			if k+1 < len(s) {
				j = k + 2
			} else {
				j++
			}
		case s[j] == ']':
			return j + 1
		default:
			j++
		}
	}
	return len(s)
}
