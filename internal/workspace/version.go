package workspace

import (
	"encoding/hex"
	"io"

	"github.com/zeebo/xxh3"
)

// Version returns the version token of content: its xxh3-128 hash as 32
// lowercase hex characters. A version depends on the bytes only, so
// touching a file's mtime is not a change, and equal content on two hosts
// has equal versions. It is also the download ETag.
func Version(content []byte) string {
	b := xxh3.Hash128(content).Bytes()
	return hex.EncodeToString(b[:])
}

// VersionHash computes a version incrementally: after the content is
// written to it in any pieces, Version equals Version of the whole. It is
// the one owner of the token's format besides Version. Not safe for
// concurrent use.
type VersionHash struct{ h *xxh3.Hasher128 }

// NewVersionHash returns an empty VersionHash.
func NewVersionHash() *VersionHash { return &VersionHash{h: xxh3.New128()} }

// Write adds p to the content; it never fails.
func (v *VersionHash) Write(p []byte) (int, error) { return v.h.Write(p) }

// Reset empties the content.
func (v *VersionHash) Reset() { v.h.Reset() }

// Version returns the version of the content written so far.
func (v *VersionHash) Version() string {
	b := v.h.Sum128().Bytes()
	return hex.EncodeToString(b[:])
}

// versionOf hashes r to its end without buffering it; it equals Version of
// the same bytes.
func versionOf(r io.Reader) (string, int64, error) {
	h := NewVersionHash()
	n, err := io.CopyBuffer(h, r, make([]byte, 256<<10))
	if err != nil {
		return "", n, err
	}
	return h.Version(), n, nil
}

// isVersion reports whether s has the form of a version token.
func isVersion(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
