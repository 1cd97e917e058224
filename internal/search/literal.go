package search

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Literal extraction: from the parsed regular expression, derive a set of
// literals such that every match contains at least one of them. The
// grep engine finds the literals first (memchr on a rare byte) and runs
// the regular expression only on the lines that contain one, as ripgrep
// does. The one property that matters is that the prefilter never rejects
// a line the regular expression matches; FuzzPrefilter checks it.

const (
	maxLits   = 32  // literals in one set (an alternation of more is not prefiltered)
	maxLitLen = 250 // bytes in one literal
)

// litSet is a set of literals. With fold set they match ASCII
// case-insensitively and are stored in lower case.
type litSet struct {
	lits []string
	fold bool
	// complete: a string matches the expression exactly when it is one of
	// the literals (modulo fold), with no condition on its surroundings.
	// An occurrence of a complete set's literal in a line is a match.
	complete bool
}

// litInfo is what extraction knows about one subexpression.
type litInfo struct {
	// seq: every match of the subexpression is one of these strings (nil
	// when unknown or too many).
	seq *litSet
	// req: every match contains one of these strings (nil when none is
	// known). Only set when it is better than seq.
	req *litSet
}

// foldSafe reports whether r, matched case-insensitively, can be found by
// an ASCII case-insensitive comparison: it is ASCII and every rune of its
// case-folding orbit is ASCII. 'k' (Kelvin sign) and 's' (long s) are
// not.
func foldSafe(r rune) bool {
	if r >= utf8.RuneSelf {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// prefilterFor returns the best literal set for re, or nil when there is
// none worth using.
func prefilterFor(re *syntax.Regexp) *litSet {
	info := extract(re)
	best := bestSet(info.seq, info.req)
	if best == nil || score(best) <= 0 {
		return nil
	}
	if best != info.seq {
		c := *best
		c.complete = false
		best = &c
	}
	return best
}

func extract(re *syntax.Regexp) litInfo {
	switch re.Op {
	case syntax.OpLiteral:
		return literalInfo(re.Rune, re.Flags&syntax.FoldCase != 0)
	case syntax.OpCharClass:
		return classInfo(re.Rune)
	case syntax.OpEmptyMatch:
		return litInfo{seq: &litSet{lits: []string{""}, complete: true}}
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return litInfo{seq: &litSet{lits: []string{""}}}
	case syntax.OpCapture:
		return extract(re.Sub[0])
	case syntax.OpConcat:
		return concatInfo(re.Sub)
	case syntax.OpAlternate:
		return alternateInfo(re.Sub)
	case syntax.OpQuest:
		s := extract(re.Sub[0])
		if s.seq == nil {
			return litInfo{}
		}
		return litInfo{seq: union(s.seq, &litSet{lits: []string{""}, complete: true})}
	case syntax.OpPlus:
		s := extract(re.Sub[0])
		return litInfo{req: bestSet(s.seq, s.req)}
	case syntax.OpRepeat:
		s := extract(re.Sub[0])
		switch {
		case re.Min == 0 && re.Max == 1 && s.seq != nil:
			return litInfo{seq: union(s.seq, &litSet{lits: []string{""}, complete: true})}
		case re.Min == 0:
			return litInfo{}
		case re.Min == re.Max && s.seq != nil:
			out := &litSet{lits: []string{""}, complete: true}
			for range re.Min {
				if out = product(out, s.seq); out == nil {
					break
				}
			}
			if out != nil {
				return litInfo{seq: out}
			}
		}
		return litInfo{req: bestSet(s.seq, s.req)}
	}
	// Star, any character, no match: nothing is required.
	return litInfo{}
}

func literalInfo(runes []rune, fold bool) litInfo {
	if !fold {
		return litInfo{seq: &litSet{lits: []string{string(runes)}, complete: true}}
	}
	// Case-insensitive. Fold-safe runes are compared ASCII
	// case-insensitively; any other rune is spelled out as each member of
	// its case-folding orbit ("s" as s and ſ, "γ" as γ and Γ), as long as
	// that makes few literals.
	set := &litSet{lits: []string{""}, fold: true, complete: true}
	for _, r := range runes {
		var variants []string
		if foldSafe(r) {
			variants = []string{string(r)}
		} else {
			variants = foldVariants(r)
		}
		if len(set.lits)*len(variants) > maxLits {
			set = nil
			break
		}
		next := make([]string, 0, len(set.lits)*len(variants))
		for _, a := range set.lits {
			for _, v := range variants {
				next = append(next, asciiLower(a+v))
			}
		}
		set.lits = dedup(next)
	}
	if set != nil {
		return litInfo{seq: set}
	}
	// Too many spellings: runs of fold-safe runes are required literals.
	var best *litSet
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			best = bestSet(best, &litSet{lits: []string{asciiLower(b.String())}, fold: true})
			b.Reset()
		}
	}
	for _, r := range runes {
		if foldSafe(r) {
			b.WriteRune(r)
			continue
		}
		flush()
	}
	flush()
	return litInfo{req: best}
}

// foldVariants spells r's case-folding orbit: one ASCII member (the fold
// comparison covers its other case) and every non-ASCII one.
func foldVariants(r rune) []string {
	out := []string{}
	ascii := false
	f := r
	for {
		if f < utf8.RuneSelf {
			if !ascii {
				out = append(out, string(f))
				ascii = true
			}
		} else {
			out = append(out, string(f))
		}
		if f = unicode.SimpleFold(f); f == r {
			break
		}
	}
	return out
}

// classInfo enumerates small classes ([ab], [0-3]).
func classInfo(ranges []rune) litInfo {
	n := 0
	for i := 0; i+1 < len(ranges); i += 2 {
		n += int(ranges[i+1]-ranges[i]) + 1
		if n > 8 {
			return litInfo{}
		}
	}
	if n == 0 {
		return litInfo{}
	}
	s := &litSet{complete: true}
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			s.lits = append(s.lits, string(r))
		}
	}
	return litInfo{seq: s}
}

func concatInfo(subs []*syntax.Regexp) litInfo {
	run := &litSet{lits: []string{""}, complete: true}
	whole := true
	var best *litSet
	for _, sub := range subs {
		s := extract(sub)
		if s.seq != nil {
			if p := product(run, s.seq); p != nil {
				run = p
				continue
			}
			// Too many combinations: what we have is required, and the
			// next run starts with this subexpression.
			best = bestSet(best, run)
			run = s.seq
			whole = false
			continue
		}
		whole = false
		best = bestSet(best, run)
		best = bestSet(best, s.req)
		run = &litSet{lits: []string{""}, complete: true}
	}
	if whole {
		return litInfo{seq: run, req: nil}
	}
	return litInfo{req: bestSet(best, run)}
}

func alternateInfo(subs []*syntax.Regexp) litInfo {
	infos := make([]litInfo, len(subs))
	allSeq := true
	for i, sub := range subs {
		infos[i] = extract(sub)
		if infos[i].seq == nil {
			allSeq = false
		}
	}
	if allSeq {
		var u *litSet
		for _, in := range infos {
			if u == nil {
				u = in.seq
				continue
			}
			if u = union(u, in.seq); u == nil {
				break
			}
		}
		if u != nil {
			return litInfo{seq: u}
		}
	}
	// Every branch must require something.
	var u *litSet
	for _, in := range infos {
		b := bestSet(in.seq, in.req)
		if b == nil || score(b) <= 0 {
			return litInfo{}
		}
		if u == nil {
			u = b
			continue
		}
		if u = union(u, b); u == nil {
			return litInfo{}
		}
	}
	if u != nil {
		c := *u
		c.complete = false
		u = &c
	}
	return litInfo{req: u}
}

// product is the set of concatenations a+b, or nil when too large.
func product(a, b *litSet) *litSet {
	if len(a.lits)*len(b.lits) > maxLits {
		return nil
	}
	out := &litSet{fold: a.fold || b.fold, complete: a.complete && b.complete}
	if a.fold != b.fold && !(isEmptySet(a) || isEmptySet(b)) {
		// Mixing case-sensitive and folded parts: the folded search
		// over-approximates the case-sensitive part.
		out.complete = false
	}
	if isEmptySet(a) {
		out.fold = b.fold
	} else if isEmptySet(b) {
		out.fold = a.fold
	}
	for _, x := range a.lits {
		for _, y := range b.lits {
			if len(x)+len(y) > maxLitLen {
				return nil
			}
			s := x + y
			if out.fold {
				s = asciiLower(s)
			}
			out.lits = append(out.lits, s)
		}
	}
	out.lits = dedup(out.lits)
	return out
}

func isEmptySet(s *litSet) bool { return len(s.lits) == 1 && s.lits[0] == "" }

// union is a ∪ b, or nil when too large.
func union(a, b *litSet) *litSet {
	out := &litSet{fold: a.fold || b.fold, complete: a.complete && b.complete && a.fold == b.fold}
	for _, s := range [][]string{a.lits, b.lits} {
		for _, l := range s {
			if out.fold {
				l = asciiLower(l)
			}
			out.lits = append(out.lits, l)
		}
	}
	out.lits = dedup(out.lits)
	if len(out.lits) > maxLits {
		return nil
	}
	return out
}

func dedup(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// bestSet returns the better of two candidate sets (nil counts as worst).
func bestSet(a, b *litSet) *litSet {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	if score(b) > score(a) {
		return b
	}
	return a
}

// score rates a set as a prefilter: the weakest literal decides, longer
// and rarer is better, each extra literal costs a little. A set with an
// empty literal is worthless (0).
func score(s *litSet) int {
	if s == nil || len(s.lits) == 0 {
		return 0
	}
	worst := 1 << 30
	for _, l := range s.lits {
		if l == "" {
			return 0
		}
		v := 0
		for i := 0; i < len(l); i++ {
			r := int(byteRank[l[i]])
			if s.fold {
				r = foldRank(l[i])
			}
			v += 16 + (256-min(r, 256))/8
		}
		worst = min(worst, v)
	}
	return max(worst-2*(len(s.lits)-1), 1)
}

// asciiLower lowers ASCII letters only: fold literals compare other
// bytes exactly.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				b[j] = lower(b[j])
			}
			return string(b)
		}
	}
	return s
}
