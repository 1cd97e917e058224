package httpapi_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/ops"
)

// benchTarget is the server a watch benchmark talks to: the one named by
// FSPLANE_BENCH_URL and FSPLANE_BENCH_ROOT (bench/watch.sh starts the
// real binary), else an in-process server.
func benchTarget(b *testing.B) (*client.Client, string) {
	if u, root := os.Getenv("FSPLANE_BENCH_URL"), os.Getenv("FSPLANE_BENCH_ROOT"); u != "" && root != "" {
		c, err := client.New(u)
		if err != nil {
			b.Fatal(err)
		}
		return c, root
	}
	e := newXEnv(b, ops.Options{})
	return e.c, e.root
}

func benchDebounce() int {
	if d, err := strconv.Atoi(os.Getenv("FSPLANE_BENCH_DEBOUNCE")); err == nil {
		return d
	}
	return 300
}

// BenchmarkWatchLatency measures write → event available to a long
// poller: a client long-polls, the benchmark writes a file, and the time
// from before the write to the poll's answer is one sample. Reports
// p50 and p99, and each minus the debounce.
func BenchmarkWatchLatency(b *testing.B) {
	c, root := benchTarget(b)
	debounce := benchDebounce()
	dir, err := os.MkdirTemp(root, "latency-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	w, err := c.CreateWatch(bg, client.CreateWatchRequest{Path: dir, Debounce: &debounce})
	if err != nil {
		b.Fatal(err)
	}
	defer c.StopWatch(bg, w.WatcherID)
	var cursor int64
	var lat []time.Duration
	i := 0
	for b.Loop() {
		i++
		type answer struct {
			res *client.PollResult
			err error
			at  time.Time
		}
		ch := make(chan answer, 1)
		go func(cur int64) {
			res, err := c.PollWatch(bg, w.WatcherID, client.PollQuery{Cursor: &cur, Timeout: f64(30)})
			ch <- answer{res, err, time.Now()}
		}(cursor)
		time.Sleep(20 * time.Millisecond) // the poll is waiting
		start := time.Now()
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
		a := <-ch
		if a.err != nil || len(a.res.Events) == 0 {
			b.Fatalf("poll: %+v %v", a.res, a.err)
		}
		lat = append(lat, a.at.Sub(start))
		// Take the write that follows the create, then go on.
		time.Sleep(time.Duration(debounce)*time.Millisecond + 20*time.Millisecond)
		res, err := c.PollWatch(bg, w.WatcherID, client.PollQuery{Cursor: &a.res.Cursor, Timeout: f64(5)})
		if err != nil {
			b.Fatal(err)
		}
		cursor = res.Cursor
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	p50, p99 := lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p99), "p99-ms")
	b.ReportMetric(ms(p50)-float64(debounce), "p50-over-debounce-ms")
	b.ReportMetric(ms(p99)-float64(debounce), "p99-over-debounce-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkWatchBurst creates 10,000 files in a watched directory while a
// client polls, and reports how many creations were delivered and
// whether overflow was set: every creation delivered, or overflow, never
// a silent loss.
func BenchmarkWatchBurst(b *testing.B) {
	c, root := benchTarget(b)
	const n = 10_000
	for b.Loop() {
		dir, err := os.MkdirTemp(root, "burst-")
		if err != nil {
			b.Fatal(err)
		}
		w, err := c.CreateWatch(bg, client.CreateWatchRequest{Path: dir, Debounce: client.Int(50)})
		if err != nil {
			b.Fatal(err)
		}
		seen := map[string]bool{}
		overflow := false
		done := make(chan struct{})
		go func() {
			defer close(done)
			var cursor int64
			idle := 0
			for len(seen) < n && !overflow && idle < 5 {
				res, err := c.PollWatch(bg, w.WatcherID, client.PollQuery{Cursor: &cursor, Limit: client.Int(1000), Timeout: f64(1)})
				if err != nil {
					b.Error(err)
					return
				}
				cursor, overflow = res.Cursor, res.Overflow
				if len(res.Events) == 0 {
					idle++
				}
				for _, e := range res.Events {
					if e.Type == "create" && e.RelativePath != nil {
						seen[*e.RelativePath] = true
					}
				}
			}
		}()
		start := time.Now()
		for i := range n {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		made := time.Since(start)
		<-done
		c.StopWatch(bg, w.WatcherID)
		os.RemoveAll(dir)
		if !overflow && len(seen) != n {
			b.Fatalf("silent loss: %d of %d creations delivered, no overflow", len(seen), n)
		}
		b.ReportMetric(float64(len(seen)), "delivered")
		b.ReportMetric(map[bool]float64{true: 1}[overflow], "overflow")
		b.ReportMetric(float64(n)/made.Seconds(), "creations/s")
	}
	b.ReportMetric(0, "ns/op")
}
