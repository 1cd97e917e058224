package tui

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/internal/connector/host"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var t0 = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

// plain is the profile of a view with no styles: its golden files are
// text.
const plain = colorprofile.Ascii

// modeCalls records SetMode calls.
type modeCalls struct {
	mu    sync.Mutex
	modes []proto.Mode
	err   error
}

func (c *modeCalls) set(m proto.Mode) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.modes = append(c.modes, m)
	return c.err
}

func newModel(calls *modeCalls, roots ...string) Model {
	if len(roots) == 0 {
		roots = []string{"/home/ada/project", "/home/ada/notes"}
	}
	m := New(Options{HubURL: "ws://127.0.0.1:18091/v2/connector", Name: "ada-laptop", Roots: roots,
		SetMode: calls.set, Profile: plain})
	return send(m, tea.WindowSizeMsg{Width: 80, Height: 20})
}

func send(m Model, msgs ...tea.Msg) Model {
	for _, msg := range msgs {
		next, _ := m.Update(msg)
		m = next.(Model)
	}
	return m
}

// key is the key press named s, as bubbletea reports it from a terminal.
func key(s string) tea.KeyPressMsg {
	switch s {
	case "f3":
		return tea.KeyPressMsg{Code: tea.KeyF3}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "home":
		return tea.KeyPressMsg{Code: tea.KeyHome}
	case " ":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func state(at time.Duration, s host.State, id string, retry time.Duration, err string) EventMsg {
	return EventMsg{Time: t0.Add(at), Kind: host.EventState, State: s, HostID: id, Retry: retry, Err: err, Mode: proto.ReadOnly}
}

func op(at time.Duration, name, path, result string, d time.Duration) EventMsg {
	return EventMsg{Time: t0.Add(at), Kind: host.EventOp, Op: &host.OpRecord{ID: "x", Op: name, Path: path, Result: result, Duration: d,
		Delivered: result != host.ResultCancelled && result != host.ResultDropped}}
}

// session is a typical run: connect, a few ops, a refused write, a drop
// and a reconnect.
func session() []tea.Msg {
	return []tea.Msg{
		state(0, host.Connecting, "", 0, ""),
		state(time.Second, host.Connected, "h-1", 0, ""),
		op(2*time.Second, "read", "src/main.go", "ok", 420*time.Microsecond),
		op(3*time.Second, "grep", ".", "ok", 37*time.Millisecond),
		op(4*time.Second, "write", "src/main.go", "read_only", 90*time.Microsecond),
		op(5*time.Second, "read", "../etc/passwd", "outside_root", 150*time.Microsecond),
		op(6*time.Second, "patch", "", "ok", 3*time.Millisecond),
		op(7*time.Second, "grep", "big tree", host.ResultCancelled, 2500*time.Millisecond),
		reconnecting(8*time.Second, 1200*time.Millisecond),
		state(9*time.Second, host.Connecting, "", 0, ""),
	}
}

// reconnecting is the state event of a connection lost, as the host
// sends it: the reason and the whole error.
func reconnecting(at, retry time.Duration) EventMsg {
	ev := state(at, host.Reconnecting, "", retry, "connection lost: failed to get reader: failed to read frame header: EOF")
	ev.Reason = "connection lost (closed abruptly)"
	return ev
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s view (-want +got):\n%s", name, diff)
	}
}

func TestViewGolden(t *testing.T) {
	t.Parallel()
	calls := &modeCalls{}
	for _, tt := range []struct {
		name string
		m    func() Model
	}{
		{"connecting", func() Model { return newModel(calls) }},
		{"connected", func() Model {
			return send(newModel(calls), session()[:7]...)
		}},
		{"reconnecting", func() Model { return send(newModel(calls), session()[:9]...) }},
		{"switching", func() Model {
			return send(send(newModel(calls), session()[:2]...), key("f3"))
		}},
		{"read-write", func() Model {
			next, cmd := send(newModel(calls), session()[:2]...).Update(key("f3"))
			m := send(next.(Model), EventMsg{Time: t0.Add(3 * time.Second), Kind: host.EventMode, Mode: proto.ReadWrite}, cmd())
			return send(m, op(4*time.Second, "write", "src/main.go", "ok", 2*time.Millisecond))
		}},
		{"failed", func() Model {
			return send(newModel(calls), state(0, host.Connecting, "", 0, ""),
				state(time.Second, host.Failed, "", 0, "the hub refused the connection (HTTP 401 Unauthorized: connector token required)"))
		}},
		{"scrolled", func() Model {
			m := newModel(calls)
			for i := range 30 {
				m = send(m, op(time.Duration(i)*time.Second, "stat", "file"+string(rune('a'+i%26))+".txt", "ok", time.Millisecond))
			}
			return send(m, key("up"), key("up"), key("up"))
		}},
		{"narrow-many-roots", func() Model {
			m := newModel(calls, "/r/one", "/r/two", "/r/three", "/r/four", "/r/five")
			m = send(m, tea.WindowSizeMsg{Width: 40, Height: 16})
			return send(m, op(time.Second, "read", "a/very/long/path/that/does/not/fit/in/forty/columns.txt", "ok", time.Millisecond))
		}},
		{"long-path-120x30", func() Model {
			m := send(newModel(calls), tea.WindowSizeMsg{Width: 120, Height: 30})
			return send(m, append(session()[:2], op(3*time.Second, "write", longPath, "ok", 16*time.Millisecond))...)
		}},
		// Small windows keep the mode and state, then the hub, the host
		// and the roots, then the log (Model.layout).
		{"small-20x6", func() Model {
			return send(newModel(calls), append(session(), tea.WindowSizeMsg{Width: 20, Height: 6})...)
		}},
		{"small-40x9", func() Model {
			return send(newModel(calls), append(session(), tea.WindowSizeMsg{Width: 40, Height: 9})...)
		}},
		{"tiny-10x4", func() Model {
			m := send(newModel(calls), session()[:2]...)
			return send(m, EventMsg{Time: t0.Add(3 * time.Second), Kind: host.EventMode, Mode: proto.ReadWrite},
				tea.WindowSizeMsg{Width: 10, Height: 4})
		}},
		{"tiny-switching-10x4", func() Model {
			m := send(newModel(calls), session()[:2]...)
			return send(m, key("f3"), tea.WindowSizeMsg{Width: 10, Height: 4})
		}},
		{"one-row-40x1", func() Model {
			return send(newModel(calls), append(session()[:2], tea.WindowSizeMsg{Width: 40, Height: 1})...)
		}},
		{"many-roots-40x6", func() Model {
			m := newModel(calls, "/r/one", "/r/two", "/r/three", "/r/four", "/r/five")
			return send(m, tea.WindowSizeMsg{Width: 40, Height: 6})
		}},
		{"many-roots-40x5", func() Model {
			m := newModel(calls, "/r/one", "/r/two", "/r/three", "/r/four", "/r/five")
			return send(m, tea.WindowSizeMsg{Width: 40, Height: 5})
		}},
		{"hostile-path", func() Model {
			// The notice is raw, as a careless host could pass it on:
			// SGR, a C1 CSI clearing the screen, an OSC retitling the
			// terminal, a bell, and a carriage return and line feed that
			// would forge a log line.
			return send(newModel(calls), op(time.Second, "read", "evil\x1b[2J\x1b]0;owned\x07.txt", "not_found", time.Millisecond),
				EventMsg{Time: t0.Add(2 * time.Second), Kind: host.EventNotice,
					Message: "hub error bad_message: \x1b[31mred\x1b[0m \u009b2J \x1b]0;owned\x07\r\n15:04:08  forged"})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := tt.m().View().Content
			if i := strings.IndexFunc(v, func(r rune) bool { return r != '\n' && unicode.IsControl(r) }); i >= 0 {
				t.Errorf("the view contains the control character %q:\n%q", []rune(v[i:])[0], v)
			}
			golden(t, tt.name, v)
		})
	}
}

func TestViewFitsTheWindow(t *testing.T) {
	t.Parallel()
	m := send(newModel(&modeCalls{}), session()...)
	for _, size := range []tea.WindowSizeMsg{{Width: 80, Height: 20}, {Width: 40, Height: 10}, {Width: 120, Height: 50}} {
		m = send(m, size)
		lines := strings.Split(m.View().Content, "\n")
		if len(lines) != size.Height {
			t.Errorf("%dx%d: the view has %d lines", size.Width, size.Height, len(lines))
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > size.Width {
				t.Errorf("%dx%d: line %q is %d wide", size.Width, size.Height, l, w)
			}
		}
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, " Read-only ") {
			t.Errorf("%dx%d: footer %q", size.Width, size.Height, last)
		}
	}
}

// fakeHost is the host side of F3: SetMode behaves like host.SetMode
// (switch, emit EventMode when the mode changed, then tell the hub), and
// the events it emits wait in events until the test delivers them, so a
// test can order them against SetMode's reply.
type fakeHost struct {
	mode   proto.Mode
	calls  []proto.Mode
	events []tea.Msg
	// sendErr fails the announcement after the switch (the connection is
	// failing); refuse fails before it, leaving the mode unchanged.
	sendErr, refuse error
}

func (h *fakeHost) setMode(m proto.Mode) error {
	h.calls = append(h.calls, m)
	if h.refuse != nil {
		return h.refuse
	}
	if h.mode != m {
		h.mode = m
		h.events = append(h.events, EventMsg{Time: t0.Add(time.Minute), Kind: host.EventMode, Mode: m})
	}
	return h.sendErr
}

func footer(m Model) string {
	lines := strings.Split(m.View().Content, "\n")
	return lines[len(lines)-1]
}

// TestF3ModeChange delivers F3, SetMode's reply and the host's EventMode
// in the orders a program can see them; whatever the order, the model
// ends showing the mode the host is in.
func TestF3ModeChange(t *testing.T) {
	t.Parallel()
	const (
		ro, rw = proto.ReadOnly, proto.ReadWrite
		// Steps: press F3; run the commands F3 returned (SetMode);
		// deliver their replies; deliver the host's events.
		press, run, reply, confirm = "f3", "run", "reply", "confirm"
	)
	errSend := errors.New("sending hello: connection closed")
	for _, tt := range []struct {
		name      string
		sendErr   error
		refuse    error
		steps     []any // a step name or a tea.Msg to send
		wantCalls []proto.Mode
		wantMode  proto.Mode
		wantLog   string // the end of the last log line; "" for no check
	}{
		{name: "confirmation before the reply", steps: []any{press, run, confirm, reply},
			wantCalls: []proto.Mode{rw}, wantMode: rw},
		{name: "reply before the confirmation", steps: []any{press, run, reply, confirm},
			wantCalls: []proto.Mode{rw}, wantMode: rw},
		{name: "double press", steps: []any{press, press, run, confirm, reply},
			wantCalls: []proto.Mode{rw}, wantMode: rw},
		{name: "double press, reply first", steps: []any{press, press, run, reply, confirm},
			wantCalls: []proto.Mode{rw}, wantMode: rw},
		{name: "press between confirmation and reply", steps: []any{press, run, confirm, press, reply},
			wantCalls: []proto.Mode{rw}, wantMode: rw},
		{name: "press after the reply switches back", steps: []any{press, run, confirm, reply, press, run, reply, confirm},
			wantCalls: []proto.Mode{rw, ro}, wantMode: ro},
		{name: "state event during the switch", steps: []any{press, state(time.Second, host.Connected, "h-2", 0, ""), run, reply, confirm},
			wantCalls: []proto.Mode{rw}, wantMode: rw},
		{name: "a state event read before the switch lands after it", steps: []any{press, run, confirm, state(time.Second, host.Connected, "h-1", 0, ""), reply},
			wantCalls: []proto.Mode{rw}, wantMode: rw},
		{name: "refused: the mode reverts", refuse: errors.New("host: mode refused"), steps: []any{press, run, confirm, reply},
			wantCalls: []proto.Mode{rw}, wantMode: ro, wantLog: "could not announce Read&Write to the hub: host: mode refused"},
		{name: "refused twice", refuse: errors.New("host: mode refused"), steps: []any{press, run, reply, press, run, reply},
			wantCalls: []proto.Mode{rw, rw}, wantMode: ro, wantLog: "could not announce Read&Write to the hub: host: mode refused"},
		{name: "hub not told: the host switched anyway", sendErr: errSend, steps: []any{press, run, confirm, reply},
			wantCalls: []proto.Mode{rw}, wantMode: rw, wantLog: "could not announce Read&Write to the hub: sending hello: connection closed"},
		{name: "hub not told, reply first", sendErr: errSend, steps: []any{press, run, reply, confirm},
			wantCalls: []proto.Mode{rw}, wantMode: rw, wantLog: "15:05:05  Local access: Read&Write."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := &fakeHost{mode: ro, sendErr: tt.sendErr, refuse: tt.refuse}
			m := New(Options{HubURL: "ws://hub", Name: "ada-laptop", Roots: []string{"/r"}, SetMode: h.setMode, Profile: plain})
			m = send(m, state(0, host.Connected, "h-1", 0, ""))
			var cmds []tea.Cmd
			var replies []tea.Msg
			for i, step := range tt.steps {
				switch step {
				case press:
					next, cmd := m.Update(key("f3"))
					m = next.(Model)
					if cmd != nil {
						cmds = append(cmds, cmd)
					}
				case run: // in order; bubbletea runs each in its own goroutine
					for _, cmd := range cmds {
						replies = append(replies, cmd())
					}
					cmds = nil
				case reply:
					m = send(m, replies...)
					replies = nil
				case confirm:
					m = send(m, h.events...)
					h.events = nil
				default:
					m = send(m, step)
				}
				// The footer says a change is pending exactly while one is.
				inFlight := len(cmds)+len(replies) > 0
				if f := footer(m); strings.Contains(f, "switching to") != inFlight {
					t.Errorf("after step %d (%v), with a change in flight %t, footer %q", i, step, inFlight, f)
				}
			}
			if len(cmds)+len(replies)+len(h.events) > 0 {
				t.Fatal("the steps left commands, replies or events undelivered")
			}
			if h.mode != tt.wantMode {
				t.Fatalf("the host is in %s, the test wants %s", h.mode, tt.wantMode)
			}
			if diff := cmp.Diff(tt.wantCalls, h.calls); diff != "" {
				t.Errorf("SetMode calls (-want +got):\n%s", diff)
			}
			if m.Mode() != h.mode {
				t.Errorf("the model shows %s; the host is in %s", m.Mode(), h.mode)
			}
			if f := footer(m); !strings.HasPrefix(f, " "+ModeLabel(h.mode)+" ") {
				t.Errorf("footer %q; the host is in %s", f, ModeLabel(h.mode))
			}
			l := m.Log()
			last := l[len(l)-1]
			if tt.wantLog != "" && !strings.HasSuffix(last, tt.wantLog) {
				t.Errorf("last log line %q, want %q", last, tt.wantLog)
			}
			failures := 0
			for _, line := range l {
				if strings.Contains(line, "could not announce") {
					failures++
				}
			}
			wantFailures := 0
			if tt.refuse != nil || tt.sendErr != nil {
				wantFailures = len(tt.wantCalls) // each call failed
			}
			if failures != wantFailures {
				t.Errorf("%d failures logged, want %d:\n%s", failures, wantFailures, strings.Join(l, "\n"))
			}
		})
	}
}

// TestF3WithoutSetMode: with no host to ask, F3 flips the mode shown.
func TestF3WithoutSetMode(t *testing.T) {
	t.Parallel()
	m := New(Options{Profile: plain})
	for _, want := range []proto.Mode{proto.ReadWrite, proto.ReadOnly, proto.ReadWrite} {
		next, cmd := m.Update(key("f3"))
		m = next.(Model)
		if cmd != nil {
			t.Errorf("F3 returned a command with no SetMode")
		}
		if m.Mode() != want || !strings.HasPrefix(footer(m), " "+ModeLabel(want)+" ") {
			t.Errorf("after F3: mode %s, footer %q; want %s", m.Mode(), footer(m), want)
		}
	}
}

func TestQuitKeys(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"q", "ctrl+c"} {
		_, cmd := newModel(&modeCalls{}).Update(key(k))
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s does not quit", k)
		}
	}
	_, cmd := newModel(&modeCalls{}).Update(key("x"))
	if cmd != nil {
		t.Errorf("x returned a command")
	}
	next, cmd := newModel(&modeCalls{}).Update(DoneMsg{Err: errors.New("the hub refused the connection")})
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("DoneMsg does not quit")
	}
	if v := next.(Model).View().Content; !strings.Contains(v, "error: the hub refused the connection") {
		t.Errorf("the view does not show the error:\n%s", v)
	}
}

func TestScrolling(t *testing.T) {
	t.Parallel()
	m := newModel(&modeCalls{})
	for i := range 50 {
		m = send(m, op(time.Duration(i)*time.Second, "stat", "f.txt", "ok", time.Millisecond))
	}
	last := func(m Model) string {
		lines := strings.Split(m.View().Content, "\n")
		return lines[len(lines)-3] // the newest shown log row
	}
	if got := last(m); !strings.HasPrefix(got, "15:04:54") {
		t.Errorf("newest row %q, want 15:04:54", got)
	}
	m = send(m, key("up"), key("up"))
	if got := last(m); !strings.HasPrefix(got, "15:04:52") {
		t.Errorf("after two ups %q", got)
	}
	// New lines keep a scrolled-back view still.
	m = send(m, op(time.Minute, "stat", "g.txt", "ok", time.Millisecond))
	if got := last(m); !strings.HasPrefix(got, "15:04:52") {
		t.Errorf("the view moved on a new line: %q", got)
	}
	m = send(m, key("home"))
	if got := strings.Split(m.View().Content, "\n")[len(m.header(m.layout()))+1]; !strings.HasPrefix(got, "15:04:05") {
		t.Errorf("home shows %q first", got)
	}
	m = send(m, key("end"))
	if got := last(m); !strings.HasPrefix(got, "15:05:05") || strings.Contains(m.View().Content, "newer below") {
		t.Errorf("end shows %q", got)
	}
	m = send(m, key("down"), key("down"))
	if got := last(m); !strings.HasPrefix(got, "15:05:05") {
		t.Errorf("down past the end shows %q", got)
	}
	m = send(m, key("pgup"))
	if m.scroll != m.logHeight()-1 {
		t.Errorf("pgup scrolled %d, want %d", m.scroll, m.logHeight()-1)
	}
	// Space pages down as pgdown does (bubbletea v2 names it "space").
	for _, k := range []string{" ", "pgdown"} {
		m = send(m, key("end"), key("pgup"), key("pgup"), key(k))
		if m.scroll != m.logHeight()-1 {
			t.Errorf("pgup, pgup, %q: scrolled %d, want %d", k, m.scroll, m.logHeight()-1)
		}
	}
}

func TestLogIsBounded(t *testing.T) {
	t.Parallel()
	m := New(Options{MaxLog: 10, Profile: plain})
	for i := range 25 {
		m = send(m, op(time.Duration(i)*time.Second, "stat", "f", "ok", 0))
	}
	l := m.Log()
	if len(l) != 10 || !strings.HasPrefix(l[0], "15:04:20") {
		t.Errorf("log %q", l)
	}
	// Many times over the bound (the kept lines move to a new array now
	// and then): the last ten, in order.
	for i := range 2000 {
		m = send(m, op(time.Second, "stat", fmt.Sprintf("g%d", i), "ok", 0))
	}
	l = m.Log()
	for k, line := range l {
		if want := fmt.Sprintf(" g%d ", 1990+k); !strings.Contains(line, want) {
			t.Errorf("log line %d = %q, want it to name%s", k, line, want)
		}
	}
	if len(l) != 10 {
		t.Errorf("%d log lines, want 10", len(l))
	}
}

// TestWarningIsTheFirstLogLine: a warning (no TLS beyond this machine)
// shows in the log, since stderr is hidden while the interface runs.
func TestWarningIsTheFirstLogLine(t *testing.T) {
	t.Parallel()
	const w = "warning: hub:8080 is reached without TLS"
	m := New(Options{HubURL: "ws://hub:8080/v2/connector", Name: "h", Warning: w})
	if log := m.Log(); len(log) != 1 || !strings.Contains(log[0], w) {
		t.Errorf("log = %q, want the warning first", log)
	}
	if log := New(Options{Name: "h"}).Log(); len(log) != 0 {
		t.Errorf("log without a warning = %q", log)
	}
}

// stateRow is the view's State row.
func stateRow(m Model) string {
	for _, l := range strings.Split(m.View().Content, "\n") {
		if strings.HasPrefix(l, " State  ") {
			return strings.TrimPrefix(l, " State  ")
		}
	}
	return ""
}

// TestReconnectingCountsDown: while reconnecting, the State row shows the
// wait left before the next attempt, redrawn by ticks, and the reason in
// a few words; the ticks stop when the wait is over or the state changes.
// It used to show the wait announced, frozen ("1.8s" for seconds on end).
func TestReconnectingCountsDown(t *testing.T) {
	t.Parallel()
	m := send(newModel(&modeCalls{}), session()[:2]...)
	next, cmd := m.Update(reconnecting(8*time.Second, 4200*time.Millisecond))
	m = next.(Model)
	if cmd == nil {
		t.Fatal("reconnecting starts no tick")
	}
	if msg, ok := cmd().(tickMsg); !ok || msg.gen != m.tick {
		t.Fatalf("the tick command sent %#v", msg)
	}
	tick := func(after time.Duration) tea.Cmd {
		next, cmd := m.Update(tickMsg{gen: m.tick, at: t0.Add(8*time.Second + after)})
		m = next.(Model)
		return cmd
	}
	for _, tt := range []struct {
		after time.Duration
		want  string
		more  bool // another tick follows
	}{
		{0, "reconnecting in 4.2s — connection lost (closed abruptly)", true},
		{2100 * time.Millisecond, "reconnecting in 2.1s — connection lost (closed abruptly)", true},
		{4150 * time.Millisecond, "reconnecting in 0.1s — connection lost (closed abruptly)", true},
		{4200 * time.Millisecond, "reconnecting… — connection lost (closed abruptly)", false},
	} {
		if cmd := tick(tt.after); (cmd != nil) != tt.more {
			t.Errorf("after %s: another tick %v, want %v", tt.after, cmd != nil, tt.more)
		}
		if got := stateRow(m); got != tt.want {
			t.Errorf("after %s: State %q, want %q", tt.after, got, tt.want)
		}
	}
	// A tick of an earlier countdown changes nothing and schedules no
	// other: one countdown ticks at a time.
	old := m.tick
	next, _ = m.Update(reconnecting(20*time.Second, 3*time.Second))
	m = next.(Model)
	if next, cmd := m.Update(tickMsg{gen: old, at: t0.Add(21 * time.Second)}); cmd != nil ||
		stateRow(next.(Model)) != "reconnecting in 3.0s — connection lost (closed abruptly)" {
		t.Errorf("a stale tick: State %q, another tick %v", stateRow(next.(Model)), cmd != nil)
	}
	// Nor does a tick after the state changed.
	m = send(m, state(21*time.Second, host.Connecting, "", 0, ""))
	if next, cmd := m.Update(tickMsg{gen: m.tick, at: t0.Add(22 * time.Second)}); cmd != nil || stateRow(next.(Model)) != "connecting…" {
		t.Errorf("a tick while connecting: State %q, another tick %v", stateRow(next.(Model)), cmd != nil)
	}
}

// TestRootsAreShownSafely: a root is a directory's name, which may hold
// any byte but "/" and NUL. One with an escape sequence or a newline
// used to reach the view as it was: a newline made the view a row taller
// than the window, and the escape sequence styled the screen (or, in
// the plain log's banner, reached the terminal itself).
func TestRootsAreShownSafely(t *testing.T) {
	t.Parallel()
	evil := "/home/ada/ev\x1b[41mil\nroot\x07"
	m := send(newModel(&modeCalls{}, "/home/ada/project", evil), tea.WindowSizeMsg{Width: 80, Height: 20})
	v := m.View().Content
	if rows := strings.Count(v, "\n") + 1; rows != 20 {
		t.Errorf("the view has %d rows in a window of 20:\n%s", rows, v)
	}
	if strings.ContainsAny(v, "\x1b\a") {
		t.Errorf("the view holds a root's control characters:\n%q", v)
	}
	if want := PathText(evil); !strings.Contains(v, want) {
		t.Errorf("the view does not show the root as %s:\n%s", want, v)
	}
	b := Banner("ws://h/v2/connector", "lap", []string{"/a", evil}, proto.ReadOnly)
	if strings.ContainsAny(b, "\x1b\a\n") || !strings.Contains(b, PathText(evil)) {
		t.Errorf("Banner = %q, want the root as %s", b, PathText(evil))
	}
}
