package tui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
	"github.com/rivo/uniseg"

	"github.com/fsplane/fsplane/internal/connector/host"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

func TestLines(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		ev   host.Event
		want string
	}{
		{host.Event{Kind: host.EventState, State: host.Connecting}, "connecting to the hub"},
		{host.Event{Kind: host.EventState, State: host.Connected, HostID: "h-7"}, "connected as h-7"},
		// The reason, not the whole error, and no "disconnected" for a
		// host that was never connected.
		{host.Event{Kind: host.EventState, State: host.Reconnecting, Retry: 1234 * time.Millisecond, Reason: "hub unreachable (connection refused)",
			Err: `cannot reach the hub: failed to WebSocket dial: failed to send handshake request: Get "http://127.0.0.1:18710/v2/connector": dial tcp 127.0.0.1:18710: connect: connection refused`},
			"hub unreachable (connection refused); reconnecting in 1.2s"},
		{host.Event{Kind: host.EventState, State: host.Reconnecting, Retry: 300 * time.Millisecond, Reason: "hub shut down",
			Err: `connection lost: failed to get reader: received close frame: status = StatusNormalClosure and reason = ""`},
			"hub shut down; reconnecting in 300ms"},
		{host.Event{Kind: host.EventState, State: host.Reconnecting, Retry: 1234 * time.Millisecond, Err: "connection lost: EOF"},
			"connection lost: EOF; reconnecting in 1.2s"},
		{host.Event{Kind: host.EventState, State: host.Failed, Reason: "the hub refused the connection (HTTP 401 Unauthorized)", Err: "the hub refused the connection (HTTP 401 Unauthorized)"},
			"failed: the hub refused the connection (HTTP 401 Unauthorized)"},
		{host.Event{Kind: host.EventState, State: host.Stopped}, "stopped"},
		{host.Event{Kind: host.EventMode, Mode: proto.ReadWrite}, "Local access: Read&Write."},
		// Named as the footer names them.
		{host.Event{Kind: host.EventMode, Mode: proto.ReadOnly}, "Local access: Read-only."},
		{host.Event{Kind: host.EventNotice, Message: "aborted a transfer from the hub: transfer idle for 30 s"},
			"aborted a transfer from the hub: transfer idle for 30 s"},
		{host.Event{Kind: host.EventOp, Op: &host.OpRecord{Op: "read", Path: "a.txt", Result: "ok", Duration: 420 * time.Microsecond, Delivered: true}},
			"read       a.txt  ok  0.4ms"},
		{host.Event{Kind: host.EventOp, Op: &host.OpRecord{Op: "edit_lines", Path: "dir/my file.txt", Result: "must_read", Duration: 12 * time.Millisecond, Delivered: true}},
			`edit_lines "dir/my file.txt"  must_read  12ms`},
		{host.Event{Kind: host.EventOp, Op: &host.OpRecord{Op: "patch", Result: "ok", Duration: 2 * time.Second}},
			"patch      -  ok  2s  (not delivered)"},
		{host.Event{Kind: host.EventOp, Op: &host.OpRecord{Op: "grep", Path: ".", Result: host.ResultCancelled, Duration: 75 * time.Second}},
			"grep       .  cancelled  1m15s"},
		{host.Event{Kind: host.EventOp, Op: &host.OpRecord{Op: "read\x1b[2J", Path: "x\x1b]0;t\x07", Result: "ok", Delivered: true}},
			`read?[2J   "x\x1b]0;t\a"  ok  0.0ms`},
	} {
		tt.ev.Time = t0
		got, ok := Line(tt.ev)
		if want := "15:04:05  " + tt.want; !ok || got != want {
			t.Errorf("Line(%+v) = %q, %v; want %q", tt.ev, got, ok, want)
		}
	}
	if _, ok := Line(host.Event{Kind: host.EventOp}); ok {
		t.Error("an op event without a record made a line")
	}
}

func TestPlain(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	log := Plain(&b)
	for _, m := range session() {
		log(host.Event(m.(EventMsg)))
	}
	want := `15:04:05  connecting to the hub
15:04:06  connected as h-1
15:04:07  read       src/main.go  ok  0.4ms
15:04:08  grep       .  ok  37ms
15:04:09  write      src/main.go  read_only  0.1ms
15:04:10  read       ../etc/passwd  outside_root  0.1ms
15:04:11  patch      -  ok  3ms
15:04:12  grep       "big tree"  cancelled  2.5s
15:04:13  connection lost (closed abruptly); reconnecting in 1.2s
15:04:14  connecting to the hub
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("plain log (-want +got):\n%s", diff)
	}
	// The TUI's log is the same lines.
	m := send(newModel(&modeCalls{}), session()...)
	if diff := cmp.Diff(want, joinLines(m.Log())); diff != "" {
		t.Errorf("TUI log differs from the plain log (-plain +tui):\n%s", diff)
	}
}

func joinLines(ls []string) string {
	var b bytes.Buffer
	for _, l := range ls {
		b.WriteString(l + "\n")
	}
	return b.String()
}

func TestBanner(t *testing.T) {
	t.Parallel()
	got := Banner("ws://h/v2/connector", "lap", []string{"/a", "/b"}, proto.ReadOnly)
	if want := "fsplane connect: hub ws://h/v2/connector, host lap, roots /a, /b, mode Read-only"; got != want {
		t.Errorf("Banner = %q, want %q", got, want)
	}
}

// TestEllipsize shortens paths and messages of every kind to every width:
// never wider than asked, made of a start and an end of the text cut
// between grapheme clusters, keeping a few cells of the start, and the
// last path element whole when it fits beside them.
func TestEllipsize(t *testing.T) {
	t.Parallel()
	// Both of the renderer's measures (Model.wm).
	for _, wm := range []ansi.Method{ansi.GraphemeWidth, ansi.WcWidth} {
		for _, s := range []string{
			"a/very/long/path/that/does/not/fit/in/forty/columns.txt",
			"connection lost: read tcp 127.0.0.1:50312->127.0.0.1:18091: connection reset by peer",
			"長いディレクトリ/もっと長いディレクトリ/最後のファイル.txt",            // two cells a character
			"👩‍👩‍👧‍👦/🇯🇵/e\u0301e\u0301e\u0301/café/x.txt", // one cluster of many runes
			"nodirectory_just_a_very_long_file_name_without_any_slash.txt",
			`"dir with spaces/and \"quotes\"/and\ttab.txt"`,
			"x",
		} {
			total := wm.StringWidth(s)
			clusters := uniseg.GraphemeClusterCount(s)
			widest := 0
			for rest := s; rest != ""; {
				c, cw := ansi.FirstGraphemeCluster(rest, wm)
				rest, widest = rest[len(c):], max(widest, cw)
			}
			for w := 0; w <= total+1; w++ {
				got := ellipsize(s, w, wm)
				if gw := wm.StringWidth(got); gw > w {
					t.Fatalf("%v: ellipsize(%q, %d) = %q, %d wide", wm, s, w, got, gw)
				}
				if w >= total {
					if got != s {
						t.Errorf("%v: ellipsize(%q, %d) = %q; it fits", wm, s, w, got)
					}
					continue
				}
				if w == 0 {
					continue
				}
				pre, suf, ok := strings.Cut(got, "…")
				if !ok || !strings.HasPrefix(s, pre) || !strings.HasSuffix(s, suf) || len(pre)+len(suf) >= len(s) {
					t.Fatalf("%v: ellipsize(%q, %d) = %q: not a start, an ellipsis and an end of it", wm, s, w, got)
				}
				if uniseg.GraphemeClusterCount(pre)+uniseg.GraphemeClusterCount(s[len(pre):]) != clusters ||
					uniseg.GraphemeClusterCount(s[:len(s)-len(suf)])+uniseg.GraphemeClusterCount(suf) != clusters {
					t.Errorf("%v: ellipsize(%q, %d) = %q cuts a grapheme cluster", wm, s, w, got)
				}
				// A cluster too wide for the room left leaves that room
				// unused: by wcwidth one may be 8 cells (👩‍👩‍👧‍👦).
				if gw := wm.StringWidth(got); gw < w-max(widest-1, 1) {
					t.Errorf("%v: ellipsize(%q, %d) = %q is only %d wide", wm, s, w, got, gw)
				}
				room, keep := w-1, 0
				if room >= 2 {
					keep = min(max(room/4, 1), startCells)
				}
				if i := strings.LastIndexByte(s, '/'); i >= 0 && wm.StringWidth(s[i:]) <= room-keep && !strings.HasSuffix(got, s[i:]) {
					t.Errorf("%v: ellipsize(%q, %d) = %q loses the file name %q", wm, s, w, got, s[i:])
				}
				if first, _, _, _ := uniseg.FirstGraphemeClusterInString(s, -1); wm.StringWidth(first) <= keep && wm.StringWidth(pre) < min(keep, wm.StringWidth(first)) {
					t.Errorf("%v: ellipsize(%q, %d) = %q loses the start", wm, s, w, got)
				}
			}
		}
	}
}

// TestLineFit: a log line keeps its head and tail whole as long as they
// fit with a cell to spare, and is cut at the right edge when they do not.
func TestLineFit(t *testing.T) {
	t.Parallel()
	l := logLine{head: "15:04:05  write      ", mid: "some/dir/file.txt", tail: "  ok  16ms"}
	for w, want := range map[int]string{
		100: "15:04:05  write      some/dir/file.txt  ok  16ms",
		48:  "15:04:05  write      some/dir/file.txt  ok  16ms",
		47:  "15:04:05  write      some/d…/file.txt  ok  16ms",
		41:  "15:04:05  write      so…ile.txt  ok  16ms",
		40:  "15:04:05  write      so…le.txt  ok  16ms",
		32:  "15:04:05  write      …  ok  16ms",
		31:  "15:04:05  write      some/dir/…",
		10:  "15:04:05 …",
		1:   "…",
		0:   "",
	} {
		if got := l.fit(w, ansi.GraphemeWidth); got != want {
			t.Errorf("fit(%d) = %q, want %q", w, got, want)
		}
	}
}
