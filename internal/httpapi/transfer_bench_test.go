package httpapi_test

import (
	"testing"

	"github.com/fsplane/fsplane/internal/ops"
)

// BenchmarkUpload streams 256 MiB uploads through the real server
// (multipart parse, spool, hash, fsync, rename).
func BenchmarkUpload(b *testing.B) {
	e := newXEnv(b, ops.Options{})
	const size = 256 << 20
	b.SetBytes(size)
	for b.Loop() {
		if _, err := e.c.Upload(bg, "bench.bin", &patterned{n: size}, ""); err != nil {
			b.Fatal(err)
		}
	}
}
