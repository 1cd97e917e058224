package search

import (
	"bytes"
	"math/bits"
	"unsafe"
)

// A finder locates occurrences of a prefilter's literals. find returns the
// offset of the first occurrence that starts at or after from, or -1. It
// always checks the whole literal (case-folded for fold literals), so when
// the prefilter is complete a hit is a match. A finder keeps per-search
// state: use one per goroutine and call reset before each new buffer.
type finder interface {
	find(buf []byte, from int) int
	reset()
}

// newFinder returns a finder for the set.
func newFinder(s *litSet) finder {
	if len(s.lits) == 1 {
		return newSingleFinder(s.lits[0], s.fold)
	}
	m := &multiFinder{next: make([]int, len(s.lits))}
	for _, l := range s.lits {
		m.subs = append(m.subs, newSingleFinder(l, s.fold))
	}
	return m
}

func newSingleFinder(lit string, fold bool) finder {
	if fold {
		for i := 0; i < len(lit); i++ {
			if c := lower(lit[i]); c >= 'a' && c <= 'z' {
				return newFoldFinder(lit)
			}
		}
	}
	return newLitFinder(lit)
}

// litFinder finds one exact literal by memchr on its rarest byte. When
// that byte turns out to be dense in the haystack (a false hit every few
// bytes) it switches to bytes.Index, which copes better with that.
type litFinder struct {
	lit     []byte
	anchor  int // index in lit of the rarest byte
	misses  int // false hits of the anchor byte
	scanned int // bytes memchr went over
}

func newLitFinder(lit string) *litFinder {
	f := &litFinder{lit: []byte(lit)}
	for i := 1; i < len(lit); i++ {
		if byteRank[lit[i]] <= byteRank[lit[f.anchor]] {
			f.anchor = i
		}
	}
	return f
}

func (f *litFinder) reset() { f.misses, f.scanned = 0, 0 }

func (f *litFinder) find(buf []byte, from int) int {
	n := len(f.lit)
	if n == 0 {
		if from <= len(buf) {
			return from
		}
		return -1
	}
	if n == 1 {
		if from >= len(buf) {
			return -1
		}
		if i := bytes.IndexByte(buf[from:], f.lit[0]); i >= 0 {
			return from + i
		}
		return -1
	}
	r, rb := f.anchor, f.lit[f.anchor]
	for from+n <= len(buf) {
		if f.misses > 256 && f.misses*32 > f.scanned {
			i := bytes.Index(buf[from:], f.lit)
			if i < 0 {
				return -1
			}
			return from + i
		}
		j := bytes.IndexByte(buf[from+r:len(buf)-n+r+1], rb)
		if j < 0 {
			return -1
		}
		f.scanned += j + 1
		cand := from + j
		if bytes.Equal(buf[cand:cand+n], f.lit) {
			return cand
		}
		f.misses++
		from = cand + 1
	}
	return -1
}

// foldFinder finds a literal ASCII case-insensitively. It scans eight
// bytes at a time (SWAR) for a rare pair of adjacent bytes of the
// literal, each compared case-insensitively when it is a letter (b|0x20
// equals a lower-case letter only for that letter's two cases), then
// compares the whole literal. A memchr on one rare byte would not do:
// with both cases of a letter to look for, every letter is common.
type foldFinder struct {
	lit []byte // lower case
	// anchor, when >= 0, is a rare byte that is not a letter (a digit,
	// punctuation, a byte of a non-ASCII character): memchr finds it
	// faster than the pair scan.
	anchor int
	p      int    // index of the pair's first byte (p+1 < len, or p = 0 for one byte)
	m0, m1 uint64 // per lane: 0x20 when the pair's byte is a letter
	c0, c1 uint64 // the pair's bytes in every lane
}

const (
	lanes01 = 0x0101010101010101
	lanes7f = 0x7f7f7f7f7f7f7f7f
	lanes80 = 0x8080808080808080
)

func newFoldFinder(lit string) *foldFinder {
	f := &foldFinder{lit: []byte(lit), anchor: -1}
	for i := range f.lit {
		f.lit[i] = lower(f.lit[i])
	}
	for i, c := range f.lit {
		if (c < 'a' || c > 'z') && byteRank[c] <= 200 && (f.anchor < 0 || byteRank[c] < byteRank[f.lit[f.anchor]]) {
			f.anchor = i
		}
	}
	if len(f.lit) > 1 {
		best := 1 << 30
		// The rarest pair, weighting its second byte (checked alone
		// first) more.
		for i := 0; i+1 < len(f.lit); i++ {
			if r := foldRank(f.lit[i]) + 2*foldRank(f.lit[i+1]); r <= best {
				best, f.p = r, i
			}
		}
	}
	mask := func(c byte) uint64 {
		if c >= 'a' && c <= 'z' {
			return 0x20 * lanes01
		}
		return 0
	}
	f.m0, f.c0 = mask(f.lit[f.p]), uint64(f.lit[f.p])*lanes01
	if len(f.lit) > 1 {
		f.m1, f.c1 = mask(f.lit[f.p+1]), uint64(f.lit[f.p+1])*lanes01
	}
	return f
}

func (f *foldFinder) reset() {}

// zeroLanes has the high bit of each lane of v that is zero, and no
// other bit.
func zeroLanes(v uint64) uint64 {
	return ^(((v & lanes7f) + lanes7f) | v) & lanes80
}

func (f *foldFinder) find(buf []byte, from int) int {
	n := len(f.lit)
	if f.anchor >= 0 {
		r, c := f.anchor, f.lit[f.anchor]
		for from+n <= len(buf) {
			j := bytes.IndexByte(buf[from+r:len(buf)-n+r+1], c)
			if j < 0 {
				return -1
			}
			if s := from + j; equalFoldASCII(buf[s:s+n], f.lit) {
				return s
			}
			from += j + 1
		}
		return -1
	}
	last := len(buf) - n + f.p // last position the pair's first byte may take
	i := from + f.p
	if n > 1 && i >= 0 {
		// A lane of (a|m0)^c0 | (b|m1)^c1 is zero where both bytes of
		// the pair match; the cheap test below only says whether one
		// is, the exact lanes are worked out when it says yes.
		m0, c0, m1, c1 := f.m0, f.c0, f.m1, f.c1
		base := unsafe.Pointer(unsafe.SliceData(buf))
		load := func(k int) uint64 { return *(*uint64)(unsafe.Add(base, k)) } // k+8 <= len(buf) checked by the loop
		for i+33 <= len(buf) && i+31 <= last {
			// First the pair's second byte alone (one load per lane);
			// most blocks stop here. (| and ^ bind equally in Go: the
			// parentheses matter.)
			u0 := (load(i+1) | m1) ^ c1
			u1 := (load(i+9) | m1) ^ c1
			u2 := (load(i+17) | m1) ^ c1
			u3 := (load(i+25) | m1) ^ c1
			if ((u0-lanes01)&^u0|(u1-lanes01)&^u1|(u2-lanes01)&^u2|(u3-lanes01)&^u3)&lanes80 == 0 {
				i += 32
				continue
			}
			t0 := ((load(i) | m0) ^ c0) | u0
			t1 := ((load(i+8) | m0) ^ c0) | u1
			t2 := ((load(i+16) | m0) ^ c0) | u2
			t3 := ((load(i+24) | m0) ^ c0) | u3
			if ((t0-lanes01)&^t0|(t1-lanes01)&^t1|(t2-lanes01)&^t2|(t3-lanes01)&^t3)&lanes80 == 0 {
				i += 32
				continue
			}
			for _, t := range [4]uint64{t0, t1, t2, t3} {
				for z := zeroLanes(t); z != 0; z &= z - 1 {
					pos := i + bits.TrailingZeros64(z)/8
					if s := pos - f.p; equalFoldASCII(buf[s:s+n], f.lit) {
						return s
					}
				}
				i += 8
			}
		}
	} else if n == 1 {
		// One byte: memchr for each case.
		c := f.lit[0]
		if i >= len(buf) {
			return -1
		}
		j := bytes.IndexByte(buf[i:], c)
		if u := upper(c); u != c {
			if k := bytes.IndexByte(buf[i:], u); k >= 0 && (j < 0 || k < j) {
				j = k
			}
		}
		if j < 0 {
			return -1
		}
		return i + j
	}
	for ; i <= last; i++ {
		if s := i - f.p; equalFoldASCII(buf[s:s+n], f.lit) {
			return s
		}
	}
	return -1
}

// equalFoldASCII reports whether s equals the lower-case lit, ignoring
// ASCII case in s.
func equalFoldASCII(s, lit []byte) bool {
	for i, c := range lit {
		if lower(s[i]) != c {
			return false
		}
	}
	return true
}

// multiFinder finds the earliest occurrence of any of several literals,
// keeping the next occurrence of each so every literal's scan moves
// forward only.
type multiFinder struct {
	subs []finder
	next []int // -2: unknown, -1: none left
}

func (m *multiFinder) reset() {
	for i := range m.next {
		m.next[i] = -2
		m.subs[i].reset()
	}
}

func (m *multiFinder) find(buf []byte, from int) int {
	best := -1
	for i, s := range m.subs {
		if m.next[i] != -1 && m.next[i] < from {
			m.next[i] = s.find(buf, from)
		}
		if nx := m.next[i]; nx >= 0 && (best < 0 || nx < best) {
			best = nx
		}
	}
	return best
}
