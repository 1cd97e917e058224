package tui

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/google/go-cmp/cmp"
	"github.com/muesli/termenv"

	"github.com/fsplane/fsplane/internal/connector/host"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var t0 = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

func plainRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return r
}

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
		SetMode: calls.set, Renderer: plainRenderer()})
	return send(m, tea.WindowSizeMsg{Width: 80, Height: 20})
}

func send(m Model, msgs ...tea.Msg) Model {
	for _, msg := range msgs {
		next, _ := m.Update(msg)
		m = next.(Model)
	}
	return m
}

func key(s string) tea.KeyMsg {
	switch s {
	case "f3":
		return tea.KeyMsg{Type: tea.KeyF3}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "pgup":
		return tea.KeyMsg{Type: tea.KeyPgUp}
	case "end":
		return tea.KeyMsg{Type: tea.KeyEnd}
	case "home":
		return tea.KeyMsg{Type: tea.KeyHome}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
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
		state(8*time.Second, host.Reconnecting, "", 1200*time.Millisecond, "connection lost: EOF"),
		state(9*time.Second, host.Connecting, "", 0, ""),
	}
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
		{"read-write", func() Model {
			m := send(newModel(calls), session()[:2]...)
			m = send(m, key("f3"), EventMsg{Time: t0.Add(3 * time.Second), Kind: host.EventMode, Mode: proto.ReadWrite})
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
		{"hostile-path", func() Model {
			return send(newModel(calls), op(time.Second, "read", "evil\x1b[2J\x1b]0;owned\x07.txt", "not_found", time.Millisecond),
				EventMsg{Time: t0.Add(2 * time.Second), Kind: host.EventNotice, Message: "hub error bad_message: ?[31m"})
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := tt.m().View()
			if strings.Contains(v, "\x1b") {
				t.Errorf("the view contains an escape character:\n%q", v)
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
		lines := strings.Split(m.View(), "\n")
		if len(lines) != size.Height {
			t.Errorf("%dx%d: the view has %d lines", size.Width, size.Height, len(lines))
		}
		for _, l := range lines {
			if w := lipgloss.Width(l); w > size.Width {
				t.Errorf("%dx%d: line %q is %d wide", size.Width, size.Height, l, w)
			}
		}
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, " Read-only ") {
			t.Errorf("%dx%d: footer %q", size.Width, size.Height, last)
		}
	}
}

func TestF3TogglesAndAnnounces(t *testing.T) {
	t.Parallel()
	calls := &modeCalls{}
	m := send(newModel(calls), session()[:2]...)
	footer := func(m Model) string {
		lines := strings.Split(m.View(), "\n")
		return lines[len(lines)-1]
	}
	if f := footer(m); !strings.Contains(f, "Read-only") || strings.Contains(f, "Read&Write") {
		t.Fatalf("initial footer %q", f)
	}
	next, cmd := m.Update(key("f3"))
	m = next.(Model)
	if m.Mode() != proto.ReadWrite {
		t.Errorf("mode after F3 = %s", m.Mode())
	}
	if f := footer(m); !strings.Contains(f, "Read&Write") || strings.Contains(f, "Read-only") {
		t.Errorf("footer after F3 %q", f)
	}
	if cmd == nil {
		t.Fatal("F3 returned no command to announce the mode")
	}
	if msg := cmd(); msg != (modeSetMsg{mode: proto.ReadWrite}) {
		t.Errorf("the command returned %#v", msg)
	}
	next, cmd = m.Update(key("f3"))
	m = next.(Model)
	cmd()
	if diff := cmp.Diff([]proto.Mode{proto.ReadWrite, proto.ReadOnly}, calls.modes); diff != "" {
		t.Errorf("SetMode calls (-want +got):\n%s", diff)
	}
	if f := footer(m); !strings.Contains(f, "Read-only") {
		t.Errorf("footer after the second F3 %q", f)
	}

	// A failure to announce is logged; the host's events set the mode.
	calls.err = errors.New("sending hello: connection closed")
	next, cmd = m.Update(key("f3"))
	m = send(next.(Model), cmd())
	if l := m.Log(); !strings.Contains(l[len(l)-1], "could not announce Read&Write to the hub: sending hello: connection closed") {
		t.Errorf("log %q", l)
	}
	m = send(m, EventMsg{Time: t0, Kind: host.EventMode, Mode: proto.ReadOnly})
	if m.Mode() != proto.ReadOnly || !strings.Contains(footer(m), "Read-only") {
		t.Errorf("an EventMode did not set the mode: %s", m.Mode())
	}
	m = send(m, state(0, host.Connected, "h-2", 0, ""))
	if l := m.Log(); l[len(l)-2] != "15:04:05  Local access: Read only." {
		t.Errorf("mode log line %q", l[len(l)-2])
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
	if v := next.(Model).View(); !strings.Contains(v, "error: the hub refused the connection") {
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
		lines := strings.Split(m.View(), "\n")
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
	if got := strings.Split(m.View(), "\n")[len(m.header())+1]; !strings.HasPrefix(got, "15:04:05") {
		t.Errorf("home shows %q first", got)
	}
	m = send(m, key("end"))
	if got := last(m); !strings.HasPrefix(got, "15:05:05") || strings.Contains(m.View(), "newer below") {
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
}

func TestLogIsBounded(t *testing.T) {
	t.Parallel()
	m := New(Options{MaxLog: 10, Renderer: plainRenderer()})
	for i := range 25 {
		m = send(m, op(time.Duration(i)*time.Second, "stat", "f", "ok", 0))
	}
	l := m.Log()
	if len(l) != 10 || !strings.HasPrefix(l[0], "15:04:20") {
		t.Errorf("log %q", l)
	}
}
