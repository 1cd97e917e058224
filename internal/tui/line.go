package tui

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"

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
	l, ok := lineOf(ev)
	return l.String(), ok
}

// logLine is a log line in three parts, so that a window too narrow for
// it can give up what matters least: head (the time and the op, or a
// message's fixed words) and tail (the result and duration, or the
// retry) always show; mid (a path, or a message from the hub or the
// network, of any length) loses its middle. The parts are printable text:
// no control characters.
type logLine struct{ head, mid, tail string }

func (l logLine) String() string { return l.head + l.mid + l.tail }

// fit returns the line in at most w cells, measured by wm (as the
// renderer measures them, see Model.wm). A line that fits is returned
// whole; otherwise mid is shortened in its middle (ellipsize) to the room
// head and tail leave, and only when they alone do not fit is the line
// cut at the right edge.
func (l logLine) fit(w int, wm ansi.Method) string {
	s := l.String()
	if wm.StringWidth(s) <= w {
		return s
	}
	if room := w - wm.StringWidth(l.head) - wm.StringWidth(l.tail); l.mid != "" && room >= 1 {
		return l.head + ellipsize(l.mid, room, wm) + l.tail
	}
	return wm.Truncate(s, w, "…")
}

// ellipsize shortens s to at most w cells by putting "…" in place of its
// middle. It cuts between grapheme clusters, so an emoji sequence or a
// letter with combining marks stays whole, and measures each cluster's
// cells by wm, so a wide (East Asian) character counts two. The end
// gets the larger share, and all the last path element when it fits: the
// file's name tells more than the directories above it. But the start
// always keeps a few cells (startCells, or a quarter of a narrower room):
// a name too long to fit whole used to take the whole room, and lines of
// one path looked alike only while their results were short — one
// "ver…/file_with_a_long_name.txt", the next "…with_a_long_name.txt".
func ellipsize(s string, w int, wm ansi.Method) string {
	if wm.StringWidth(s) <= w {
		return s
	}
	if w < 1 {
		return ""
	}
	type cluster struct {
		text  string
		width int
	}
	var cs []cluster
	for rest := s; rest != ""; {
		c, cw := ansi.FirstGraphemeCluster(rest, wm)
		rest = rest[len(c):]
		cs = append(cs, cluster{c, cw})
	}
	room := w - 1 // for the ellipsis
	keep := 0     // the start's least share
	if room >= 2 {
		keep = min(max(room/4, 1), startCells)
	}
	right := room - room/2
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		right = max(right, min(wm.StringWidth(s[i:]), room-keep))
	}
	// The end first, then the start gets what the end left over (a wide
	// character may not fill its share exactly).
	j, used := len(cs), 0
	for j > 0 && used+cs[j-1].width <= right {
		j--
		used += cs[j].width
	}
	var b strings.Builder
	left := room - used
	for i := 0; i < j && cs[i].width <= left; i++ {
		left -= cs[i].width
		b.WriteString(cs[i].text)
	}
	b.WriteString("…")
	for _, c := range cs[j:] {
		b.WriteString(c.text)
	}
	return b.String()
}

// startCells is the least a shortened path or message keeps of its start
// (see ellipsize).
const startCells = 4

// lineOf splits the line of an event into its parts (see logLine).
func lineOf(ev host.Event) (l logLine, ok bool) {
	switch ev.Kind {
	case host.EventState:
		switch ev.State {
		case host.Connecting:
			l.head = "connecting to the hub"
		case host.Connected:
			l.head, l.mid = "connected as ", host.Printable(ev.HostID, 100)
		case host.Reconnecting:
			// The reason says what happened ("hub unreachable (…)",
			// "hub shut down"…): never "disconnected" for a host that
			// was never connected.
			l.tail = "; reconnecting in " + Duration(ev.Retry)
			l.head, l.mid = because(ev, "")
		case host.Failed:
			l.head, l.mid = because(ev, "failed: ")
		case host.Stopped:
			l.head = "stopped"
		default:
			return logLine{}, false
		}
	case host.EventMode:
		l.head = "Local access: " + ModeLabel(ev.Mode) + "." // as the footer names it
	case host.EventNotice:
		l.mid = host.Printable(ev.Message, 300)
	case host.EventOp:
		if ev.Op == nil {
			return logLine{}, false
		}
		r := ev.Op
		l.head = fmt.Sprintf("%-10s ", host.Printable(r.Op, 20))
		l.mid = PathText(r.Path)
		l.tail = fmt.Sprintf("  %s  %s", host.Printable(r.Result, 40), Duration(r.Duration))
		if !r.Delivered && r.Result != host.ResultCancelled && r.Result != host.ResultTimeout && r.Result != host.ResultDropped {
			l.tail += "  (not delivered)"
		}
	default:
		return logLine{}, false
	}
	l.head = ev.Time.Format("15:04:05") + "  " + l.head
	return l, true
}

// reason is why a state event's connection failed, in a few words (see
// host.Reason); the whole error when the event has no reason.
func reason(ev host.Event) string {
	if ev.Reason != "" {
		return ev.Reason
	}
	return ev.Err
}

// because splits a failed connection's line after prefix: its reason,
// a few words that start with what matters, is head, cut at the right
// edge of a narrow window like the words before it; a whole error (an
// event without a reason), whose cause is at its end, is mid and loses
// its middle instead.
func because(ev host.Event, prefix string) (head, mid string) {
	if ev.Reason != "" {
		return prefix + host.Printable(ev.Reason, 300), ""
	}
	return prefix, host.Printable(ev.Err, 300)
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
// The hub URL's query values are masked (host.RedactURL).
func Banner(hubURL, name string, roots []string, mode proto.Mode) string {
	shown := make([]string, len(roots))
	for i, r := range roots {
		shown[i] = PathText(r) // a directory's name may hold control characters
	}
	return fmt.Sprintf("fsplane connect: hub %s, host %s, roots %s, mode %s", host.RedactURL(hubURL), host.Printable(name, 0), strings.Join(shown, ", "), ModeLabel(mode))
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
