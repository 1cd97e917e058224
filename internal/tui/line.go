package tui

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/fsplane/fsplane/internal/connector/host"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

// ModeLabel is the footer's name for a mode, as Agent Zero's CLI shows it.
func ModeLabel(m proto.Mode) string {
	if m == proto.ReadWrite {
		return "Read&Write"
	}
	return "Read-only"
}

// Line renders one host event as a log line ("15:04:05  read  a.txt  ok
// 0.4ms"), the same in the TUI and in the plain log. ok is false for
// events that make no line. Everything that came from the hub (paths,
// messages, ids) is made safe for a terminal: control characters cannot
// reach it.
func Line(ev host.Event) (line string, ok bool) {
	var s string
	switch ev.Kind {
	case host.EventState:
		switch ev.State {
		case host.Connecting:
			s = "connecting to the hub"
		case host.Connected:
			s = "connected as " + host.Printable(ev.HostID, 100)
		case host.Reconnecting:
			s = fmt.Sprintf("disconnected (%s); reconnecting in %s", host.Printable(ev.Err, 300), Duration(ev.Retry))
		case host.Failed:
			s = "failed: " + host.Printable(ev.Err, 300)
		case host.Stopped:
			s = "stopped"
		default:
			return "", false
		}
	case host.EventMode:
		s = "Local access: Read only."
		if ev.Mode == proto.ReadWrite {
			s = "Local access: Read&Write."
		}
	case host.EventNotice:
		s = host.Printable(ev.Message, 300)
	case host.EventOp:
		if ev.Op == nil {
			return "", false
		}
		r := ev.Op
		s = fmt.Sprintf("%-10s %s  %s  %s", host.Printable(r.Op, 20), PathText(r.Path), host.Printable(r.Result, 40), Duration(r.Duration))
		if !r.Delivered && r.Result != host.ResultCancelled && r.Result != host.ResultTimeout && r.Result != host.ResultDropped {
			s += "  (not delivered)"
		}
	default:
		return "", false
	}
	return ev.Time.Format("15:04:05") + "  " + s, true
}

// PathText shows a path the hub named: "-" for none, quoted (with
// escapes) when it has spaces, quotes or characters a terminal would
// interpret.
func PathText(p string) string {
	if p == "" {
		return "-"
	}
	if strings.ContainsFunc(p, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) || r == '"' }) {
		return strconv.Quote(p)
	}
	return p
}

// Duration rounds d for a log: 0.4ms, 12ms, 1.2s.
func Duration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// Banner describes the host in one line, for the top of the plain log.
func Banner(hubURL, name string, roots []string, mode proto.Mode) string {
	return fmt.Sprintf("fsplane connect: hub %s, host %s, roots %s, mode %s", hubURL, name, strings.Join(roots, ", "), ModeLabel(mode))
}

// Plain returns an event handler (host.Options.OnEvent) that writes each
// event's line to w: the log of --no-tui and of a non-terminal stdout.
// The host calls it one event at a time, so writes do not interleave.
func Plain(w io.Writer) func(host.Event) {
	return func(ev host.Event) {
		if l, ok := Line(ev); ok {
			_, _ = io.WriteString(w, l+"\n")
		}
	}
}
