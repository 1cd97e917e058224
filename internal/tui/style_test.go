package tui

import (
	"io"
	"os"
	"path/filepath"
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

// TestDetectProfileRunsNoTmux: under tmux the profile comes from the
// environment alone — colorprofile.Detect runs `tmux info`, with no
// timeout, when TMUX is set, which held connect before its interface
// appeared while that tmux server was stopped.
func TestDetectProfileRunsNoTmux(t *testing.T) {
	bin := t.TempDir()
	mark := filepath.Join(bin, "ran")
	if err := os.WriteFile(filepath.Join(bin, "tmux"), []byte("#!/bin/sh\ntouch "+mark+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("TMUX", "/tmp/tmux-0/default,1,0")
	t.Setenv("TERM", "tmux-256color")
	t.Setenv("TTY_FORCE", "1") // as if the output were a terminal
	for _, k := range []string{"NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLORTERM"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	if p := DetectProfile(io.Discard); p < colorprofile.ANSI {
		t.Errorf("profile %v under tmux-256color, want colors", p)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("DetectProfile ran tmux")
	}
}
