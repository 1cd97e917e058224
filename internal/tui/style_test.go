package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"

	"github.com/fsplane/fsplane/internal/connector/host"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

// TestViewStyles: a terminal of at least 16 colors gets the styles, and
// one below gets the text alone, laid out the same.
func TestViewStyles(t *testing.T) {
	t.Parallel()
	session := func(p colorprofile.Profile) Model {
		m := New(Options{HubURL: "ws://127.0.0.1:1/v2/connector", Name: "h", Roots: []string{"/r"}, Profile: p})
		return send(m, state(0, host.Connected, "h-1", 0, ""), EventMsg{Time: t0, Kind: host.EventMode, Mode: proto.ReadWrite})
	}
	if v := session(colorprofile.Ascii).View().Content; strings.Contains(v, "\x1b") {
		t.Errorf("the Ascii view has escape sequences:\n%q", v)
	}
	v := session(colorprofile.ANSI).View().Content
	for _, want := range []string{
		"\x1b[32mconnected as h-1\x1b[m",  // ok: green
		"\x1b[1;97;41m Read&Write \x1b[m", // rw: bold bright white on red
		"\x1b[2m State \x1b[m",            // label: faint
		"\x1b[1m fsplane connect\x1b[m",   // title: bold
	} {
		if !strings.Contains(v, want) {
			t.Errorf("the ANSI view lacks %q:\n%q", want, v)
		}
	}
	if plain := session(colorprofile.Ascii).View().Content; strings.Count(v, "\n") != strings.Count(plain, "\n") {
		t.Errorf("styles changed the layout:\n%s\n%s", v, plain)
	}
}

// TestViewIsOnTheAltScreen: the interface takes the whole window, on the
// alternate screen (a program option in bubbletea v1, the view's in v2).
func TestViewIsOnTheAltScreen(t *testing.T) {
	t.Parallel()
	m := newModel(&modeCalls{})
	for _, m := range []Model{m, send(m, key("f3")), send(m, DoneMsg{})} {
		if !m.View().AltScreen {
			t.Errorf("the view is not on the alternate screen:\n%s", m.View().Content)
		}
	}
}
