package edit

import "bytes"

// byteRank orders bytes by how common they are in source code and prose:
// a higher rank is more common. Searching anchors on the needle's lowest
// ranked byte, so memchr skips most of the haystack (bytes.Index anchors on
// the first byte, which in code is often a space or a tab).
var byteRank = func() [256]uint8 {
	var r [256]uint8
	// Most common first; every byte not listed keeps rank 0 (rare).
	const common = " e\tt\nainosrlcdhu.pm_f()g,=;bvy\"-w:/k0{}1'*x2<>[]&#$+3!4|5@6789\\?%~^`" +
		"ETASRINOCLDPMUFHGBVYWKXJQZjqz\r"
	n := len(common)
	for i := 0; i < n; i++ {
		r[common[i]] = uint8(255 - i)
	}
	return r
}()

// sampleSize is how many bytes of the haystack are sampled to learn its
// byte frequencies; the static ranks break ties.
const sampleSize = 64 << 10

// histogram counts bytes in up to four windows spread over haystack.
func histogram(haystack []byte) *[256]int {
	var h [256]int
	const window = sampleSize / 4
	if len(haystack) <= sampleSize {
		for _, c := range haystack {
			h[c]++
		}
		return &h
	}
	for k := 0; k < 4; k++ {
		off := (len(haystack) - window) * k / 3
		for _, c := range haystack[off : off+window] {
			h[c]++
		}
	}
	return &h
}

// rarestByte returns the index in needle of the byte least common in the
// haystack (as sampled in h), then least common in code by static rank,
// preferring later positions on ties.
func rarestByte(needle []byte, h *[256]int) int {
	best := 0
	for i := 1; i < len(needle); i++ {
		c, b := needle[i], needle[best]
		if h[c] < h[b] || (h[c] == h[b] && byteRank[c] <= byteRank[b]) {
			best = i
		}
	}
	return best
}

// indexAll returns the start offsets of the occurrences of needle in
// haystack that do not overlap, found from the start ("aa" occurs once in
// "aaa", as str.count and rg count it), in increasing order, at most limit
// of them (0: all). It anchors on the needle's rarest byte and falls back
// to bytes.Index when that byte turns out to be common in this haystack.
func indexAll(haystack, needle []byte, limit int) []int {
	if len(needle) == 0 || len(needle) > len(haystack) {
		return nil
	}
	var out []int
	r := rarestByte(needle, histogram(haystack))
	rb := needle[r]
	misses := 0
	pos := 0 // next candidate start
	for pos+len(needle) <= len(haystack) && (limit == 0 || len(out) < limit) {
		if misses > 64 && misses > 8*len(out)+64 {
			// The anchor byte is common here; bytes.Index (which uses
			// SIMD on the needle's first bytes) does better now.
			i := bytes.Index(haystack[pos:], needle)
			if i < 0 {
				break
			}
			out = append(out, pos+i)
			pos += i + len(needle)
			continue
		}
		j := bytes.IndexByte(haystack[pos+r:len(haystack)-len(needle)+r+1], rb)
		if j < 0 {
			break
		}
		cand := pos + j
		if bytes.Equal(haystack[cand:cand+len(needle)], needle) {
			out = append(out, cand)
			pos = cand + len(needle)
		} else {
			misses++
			pos = cand + 1
		}
	}
	return out
}
