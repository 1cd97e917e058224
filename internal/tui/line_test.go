package tui

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
		{host.Event{Kind: host.EventState, State: host.Reconnecting, Retry: 1234 * time.Millisecond, Err: "connection lost: EOF"},
			"disconnected (connection lost: EOF); reconnecting in 1.2s"},
		{host.Event{Kind: host.EventState, State: host.Failed, Err: "the hub refused the connection (HTTP 401 Unauthorized)"},
			"failed: the hub refused the connection (HTTP 401 Unauthorized)"},
		{host.Event{Kind: host.EventState, State: host.Stopped}, "stopped"},
		{host.Event{Kind: host.EventMode, Mode: proto.ReadWrite}, "Local access: Read&Write."},
		{host.Event{Kind: host.EventMode, Mode: proto.ReadOnly}, "Local access: Read only."},
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
15:04:13  disconnected (connection lost: EOF); reconnecting in 1.2s
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
