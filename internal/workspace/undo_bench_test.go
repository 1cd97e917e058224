package workspace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// benchEntry is the entry a write creating a 1 KiB file records: no
// previous content, so no blob, and a key and IDs of realistic length.
func benchEntry(i int) *undoEntry {
	return &undoEntry{
		Key: fmt.Sprintf("/home/agent/project/soak/dir%02d/file-%06d.txt", i%50, i), Op: "write", Tx: randomTag(),
		Time: time.Now().UTC(), AfterExists: true, AfterVersion: Version(fmt.Appendf(nil, "content %d", i)),
	}
}

// BenchmarkUndoRecord records one entry per op into a journal that starts
// empty or holding 9,900 entries under the default limits (so the latter
// reaches the 10,000-entry cap after 100 ops and stays there, each add
// evicting the oldest entry). Each op appends to the log and fsyncs it,
// so ns/op includes the disk; cpu-ns/op is the process's user and system
// CPU time per op, which the journal's bookkeeping shows in.
func BenchmarkUndoRecord(b *testing.B) {
	for _, n := range []int{0, 9900} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, blobDir), 0o700); err != nil {
				b.Fatal(err)
			}
			var log bytes.Buffer
			for i := 1; i <= n; i++ {
				e := benchEntry(i)
				e.Seq = int64(i)
				line, err := json.Marshal(undoRecord{Add: e})
				if err != nil {
					b.Fatal(err)
				}
				log.Write(append(line, '\n'))
			}
			if err := os.WriteFile(filepath.Join(dir, undoLog), log.Bytes(), 0o600); err != nil {
				b.Fatal(err)
			}
			state, err := os.OpenRoot(dir)
			if err != nil {
				b.Fatal(err)
			}
			defer state.Close()
			limits, _ := UndoLimits{}.withDefaults()
			j := newUndoJournal(state, limits)
			if err := j.tidy(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for i := n + 1; b.Loop(); i++ {
				if _, err := j.add([]*undoEntry{benchEntry(i)}, [][]byte{nil}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the user and system CPU time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
