package jsonx

import "bytes"

// MaxDepth is the deepest nesting of arrays and objects fsplane decodes,
// as encoding/json bounds its own.
const MaxDepth = maxDepth

// DepthOK reports whether no array or object in b nests deeper than
// MaxDepth, brackets inside strings not counted. segmentio/encoding/json
// decodes nesting by recursion without a bound, so a body of a few
// megabytes of "[" overflows the goroutine stack, which is fatal to the
// whole process: every decoder of input a peer sends must ask this first.
// b need not be valid JSON; DepthOK only looks at its nesting.
//
// Most inputs have fewer brackets in all than MaxDepth and are passed
// after two vectorised counts; only the rest are walked.
func DepthOK(b []byte) bool { return depthOK(b, MaxDepth) }

// depthOK is DepthOK with the bound as a parameter, for tests.
func depthOK(b []byte, limit int) bool {
	if len(b) <= limit || bytes.Count(b, []byte{'['})+bytes.Count(b, []byte{'{'}) <= limit {
		return true
	}
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '[', '{':
			if depth++; depth > limit {
				return false
			}
		case ']', '}':
			depth--
		case '"':
			// Skip the string: to the next quote not escaped.
			for i++; i < len(b); i++ {
				if b[i] == '\\' {
					i++
				} else if b[i] == '"' {
					break
				}
			}
		}
	}
	return true
}
