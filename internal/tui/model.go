// Package tui is the terminal interface of fsplane connect: a bubbletea
// model showing the hub, the connection state, the host's name, roots and
// mode, and a scrolling log of every operation the hub ran. F3 toggles
// Read-only and Read&Write (re-announcing the mode to the hub); q or
// ctrl-c quits. Line and Plain render the same log as text for --no-tui.
//
// The footer shows the mode the host is in, never the one merely asked
// for: F3 starts one mode change and the footer says "switching…" until
// its SetMode returns; a further F3 meanwhile is ignored. The mode shown
// changes only when the host reports it (EventMode, or the mode carried by
// a state event).
//
// While reconnecting, the state counts down to the next attempt: a tick
// every tickEvery redraws it, so the wait shown is the wait left, not the
// one the host announced.
//
// The view fits any window, down to one cell: it never has more rows or
// columns than the window, and leaves out what matters least first (see
// Model.layout). A log line too long for the window keeps its time, op,
// result and duration and loses the middle of its path (logLine.fit).
//
// # Concurrency
//
// Model is a value, as bubbletea wants: Update returns the next model and
// is called on the program's goroutine only. Host events reach it as
// EventMsg through tea.Program.Send, which is safe from any goroutine;
// a Feed queues them (the host's OnEvent) and sends them on, so that the
// host never waits for the screen. Options.SetMode runs in a tea.Cmd, off the UI loop, so
// a slow network never freezes the screen. Its reply (modeSetMsg) and the
// host's EventMode may reach Update in either order: the reply ends the
// pending state (a success sets the mode it asked for, a failure is
// logged), the event sets the mode, and at most one SetMode is in flight,
// so a reply always belongs to the change shown as pending.
package tui

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/fsplane/fsplane/internal/connector/host"
	"github.com/fsplane/fsplane/internal/connector/proto"
)

// Options configure a Model.
type Options struct {
	HubURL string // shown with its query values masked (host.RedactURL)
	Name   string
	Roots  []string
	Mode   proto.Mode // initial; "" is read_only
	// SetMode switches the host's mode and re-announces it (host.SetMode).
	// It is called in a command when the person presses F3. nil means
	// there is no host to ask: F3 then flips the mode shown at once.
	SetMode func(proto.Mode) error
	// MaxLog bounds the log kept for scrolling; 0 means 1000 lines.
	MaxLog int
	// Profile is the color profile of the terminal the view is for
	// (colorprofile.Detect). Below colorprofile.ANSI the view has no styles at
	// all: no colors, and no bold, faint or reverse either. For the others
	// the view is styled in full, and the program (tea.WithColorProfile)
	// downsamples its colors. The zero value, colorprofile.Unknown, is
	// colorprofile.Detect(os.Stdout, os.Environ()).
	Profile colorprofile.Profile
	// Warning, when set, is the log's first line (connecting without TLS
	// beyond this machine): stderr is hidden while the interface runs.
	Warning string
}

// EventMsg delivers a host event to the model.
type EventMsg host.Event

// DoneMsg tells the model the host stopped (Err when it failed); the
// model shows it and quits.
type DoneMsg struct{ Err error }

// tickMsg redraws the countdown to the next connection attempt; at is
// the time of the tick, gen the countdown it belongs to (Model.tick).
type tickMsg struct {
	gen int
	at  time.Time
}

// tickEvery is how often the countdown is redrawn: it shows tenths of a
// second.
const tickEvery = 100 * time.Millisecond

// modeSetMsg reports the outcome of SetMode after F3. Success means the
// host is in mode; an error may leave the host in either mode (host.SetMode
// switches and then may fail to tell the hub), so then only the host's
// EventMode sets the mode shown.
type modeSetMsg struct {
	mode proto.Mode
	err  error
}

// Model is the connect TUI's state.
type Model struct {
	opts   Options
	st     styles
	state  host.State
	hostID string
	reason string // why the connection failed, while reconnecting or failed
	// retryAt is when the next attempt starts, while reconnecting; now is
	// the time of the last tick (or event), which the countdown counts
	// from. tick is the countdown's generation: a tick of an earlier one
	// (the state changed since) is dropped, so one countdown ticks at a
	// time.
	retryAt, now time.Time
	tick         int
	mode         proto.Mode // as the host reported it
	// pending is the mode a SetMode in flight asks for; "" when none is.
	pending proto.Mode
	log     []logLine
	width   int
	height  int
	// wm is how the renderer measures text, which the view fits to the
	// window by: wcwidth until the terminal reports Unicode core (mode
	// 2027), grapheme clusters after, as bubbletea switches. The two
	// differ on emoji sequences (👍🏽 is 4 cells by wcwidth, 2 as a
	// cluster): a row measured otherwise loses its end to the renderer.
	wm     ansi.Method
	scroll int // lines scrolled back from the newest
	done   bool
}

type styles struct {
	title, label, value, ok, warn, bad, dim, rule, ro, rw, key style
}

// style is an SGR style (x/ansi's, not lipgloss's: lipgloss v2 detects
// the terminal's colors in its package init, running `tmux info` under
// tmux, in every fsplane command that links it).
type style ansi.Style

// Render returns s styled (s itself when the style is empty).
func (st style) Render(s string) string { return ansi.Style(st).Styled(s) }

// DetectProfile returns the color profile of w from the environment
// (colorprofile.Detect: TERM and its terminfo, COLORTERM, NO_COLOR,
// CLICOLOR…), without TMUX: with it, Detect runs `tmux info`, with no
// timeout, which a stopped tmux server never answers. tmux's own TERM
// (tmux-256color, screen-256color) still gives its colors.
func DetectProfile(w io.Writer) colorprofile.Profile {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TMUX=") })
	return colorprofile.Detect(w, env)
}

// newStyles returns the styles for a terminal of color profile p: none
// below ANSI (the view is then its text alone, as lipgloss v1 rendered it
// for termenv's Ascii profile).
func newStyles(p colorprofile.Profile) styles {
	if p < colorprofile.ANSI {
		var s styles // all empty: no style
		return s
	}
	var s ansi.Style
	return styles{
		title: style(s.Bold()),
		label: style(s.Faint()),
		ok:    style(s.ForegroundColor(ansi.Green)),
		warn:  style(s.ForegroundColor(ansi.Yellow)),
		bad:   style(s.Bold().ForegroundColor(ansi.Red)),
		dim:   style(s.Faint()),
		rule:  style(s.Faint()),
		ro:    style(s.Reverse(true).Bold()),
		rw:    style(s.Bold().ForegroundColor(ansi.BrightWhite).BackgroundColor(ansi.Red)),
		key:   style(s.Bold()),
	}
}

// defaultMaxLog is Options.MaxLog's default.
const defaultMaxLog = 1000

// New returns the model for a host about to connect.
func New(o Options) Model {
	if o.MaxLog <= 0 {
		o.MaxLog = defaultMaxLog
	}
	if o.Mode == "" {
		o.Mode = proto.ReadOnly
	}
	if o.Profile == colorprofile.Unknown {
		o.Profile = DetectProfile(os.Stdout)
	}
	m := Model{opts: o, st: newStyles(o.Profile), state: host.Connecting, mode: o.Mode, width: 80, height: 24}
	if o.Warning != "" {
		m.add(logLine{head: m.st.warn.Render(o.Warning)})
	}
	return m
}

// Mode returns the mode the model shows.
func (m Model) Mode() proto.Mode { return m.mode }

// Log returns the log lines kept.
func (m Model) Log() []string {
	ls := make([]string, len(m.log))
	for i, l := range m.log {
		ls[i] = l.String()
	}
	return ls
}

// Init implements tea.Model.
func (m Model) Init() tea.Cmd { return nil }

// Update implements tea.Model.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		// The window's size as it is: the view fits itself to it, as small
		// as it may be (a view taller than the window would lose its top
		// rows, the state among them, off the screen).
		m.width, m.height = max(msg.Width, 0), max(msg.Height, 0)
		m.scroll = min(m.scroll, m.maxScroll())
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.ModeReportMsg:
		// As bubbletea's event loop reads the report (Program.eventLoop).
		if msg.Mode == ansi.ModeUnicodeCore && (msg.Value == ansi.ModeReset || msg.Value == ansi.ModeSet || msg.Value == ansi.ModePermanentlySet) {
			m.wm = ansi.GraphemeWidth
		}
	case EventMsg:
		m.event(host.Event(msg))
		if msg.Kind == host.EventState {
			m.tick++
			if msg.State == host.Reconnecting {
				return m, m.nextTick()
			}
		}
	case tickMsg:
		if msg.gen != m.tick || m.state != host.Reconnecting {
			return m, nil
		}
		m.now = msg.at
		if m.now.Before(m.retryAt) {
			return m, m.nextTick()
		}
	case modeSetMsg:
		m.pending = ""
		if msg.err == nil {
			// The host is in msg.mode now. Its EventMode says so too, but a
			// state event carrying the mode read just before the switch
			// may land after it; without this the footer would keep the
			// old mode, and SetMode of a mode the host is already in
			// emits no event to correct it.
			m.mode = msg.mode
		}
		if msg.err != nil {
			m.add(logLine{head: "could not announce " + ModeLabel(msg.mode) + " to the hub: ", mid: host.Printable(msg.err.Error(), 300)})
		}
	case DoneMsg:
		m.done = true
		if msg.Err != nil {
			m.state = host.Failed
			if m.reason == "" { // the Failed event's, worded and scrubbed by the host
				m.reason = host.Printable(msg.Err.Error(), 200)
			}
		}
		return m, tea.Quit
	}
	return m, nil
}

func (m Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	page := max(m.logHeight()-1, 1)
	switch k.String() {
	case "q", "ctrl+c":
		return m, tea.Quit
	case "f3":
		if m.pending != "" {
			// One change at a time: a second SetMode racing the first
			// could leave the host in either mode.
			return m, nil
		}
		next := proto.ReadWrite
		if m.mode == proto.ReadWrite {
			next = proto.ReadOnly
		}
		set := m.opts.SetMode
		if set == nil {
			m.mode = next
			return m, nil
		}
		m.pending = next // shown as "switching…" until SetMode returns
		return m, func() tea.Msg { return modeSetMsg{mode: next, err: set(next)} }
	case "up", "k":
		m.scroll++
	case "down", "j":
		m.scroll--
	case "pgup", "b":
		m.scroll += page
	case "pgdown", "space", "f":
		m.scroll -= page
	case "home", "g":
		m.scroll = m.maxScroll()
	case "end", "G":
		m.scroll = 0
	}
	m.scroll = max(0, min(m.scroll, m.maxScroll()))
	return m, nil
}

// nextTick schedules the countdown's next tick.
func (m Model) nextTick() tea.Cmd {
	gen := m.tick
	return tea.Tick(tickEvery, func(t time.Time) tea.Msg { return tickMsg{gen: gen, at: t} })
}

func (m *Model) event(ev host.Event) {
	switch ev.Kind {
	case host.EventState:
		m.state, m.hostID, m.reason = ev.State, ev.HostID, reason(ev)
		m.now, m.retryAt = ev.Time, ev.Time.Add(ev.Retry)
		if ev.Mode != "" {
			m.mode = ev.Mode
		}
	case host.EventMode:
		m.mode = ev.Mode
	}
	if l, ok := lineOf(ev); ok {
		m.add(l)
	}
}

// add appends a log line, keeping a scrolled-back view where it is.
func (m *Model) add(l logLine) {
	m.log = append(m.log, l)
	if m.scroll > 0 {
		m.scroll++
	}
	if over := len(m.log) - m.opts.MaxLog; over > 0 {
		// Resliced, not copied: append moves the kept lines to a new
		// array only when the old one is full, every few hundred lines,
		// where a copy here moved all MaxLog of them at every line.
		m.log = m.log[over:]
	}
	m.scroll = min(m.scroll, m.maxScroll())
}

// layout is what the view shows in the window: which rows, and how many
// of them for the roots and the log.
type layout struct {
	single                  bool // one row: the mode and the state share it
	title, hub, host, rules bool
	state, footer           bool
	roots, log              int
	labels                  bool // "Hub", "State"… before the values
}

// The most roots shown; more are summed up as "… and N more".
const maxRootRows = 4

// layout decides what the view shows in a window of m.height rows and
// m.width columns. When rows are short they go, one after the other, to
//
//  1. the mode (the footer row) and the connection state; in a window one
//     row high they share it, the mode first;
//  2. the hub;
//  3. the host's name;
//  4. the roots, one a row (when not all fit, the last row shown says how
//     many more there are);
//  5. the newest log line;
//  6. the two rules around the log;
//  7. the title;
//  8. the rest of the log,
//
// and what finds no row is left out. Across, every row is cut at the
// window's right edge: the footer's keys, at its end, are the first thing
// to go, and log lines shorten their path in the middle instead
// (logLine.fit). Under labelWidth columns the rows drop their labels
// ("Hub", "State"…) and indent, which would take most of the row.
// Nothing is lost by shrinking: a larger window shows it all again.
func (m Model) layout() layout {
	h := m.height
	l := layout{labels: m.width >= labelWidth}
	switch {
	case h <= 0:
		return l
	case h == 1:
		l.single = true
		return l
	}
	l.state, l.footer = true, true
	h -= 2
	take := func(n int) int {
		n = min(n, h)
		h -= n
		return n
	}
	l.hub = take(1) == 1
	l.host = take(1) == 1
	l.roots = take(min(len(m.opts.Roots), maxRootRows))
	l.log = take(1)
	if h >= 2 {
		l.rules = take(2) == 2
	}
	l.title = take(1) == 1
	l.log += take(h)
	return l
}

// labelWidth is the narrowest window whose rows have labels.
const labelWidth = 30

// header returns the rows above the log that l shows.
func (m Model) header(l layout) []string {
	s := m.st
	row := func(label, value string) string {
		if !l.labels {
			return value
		}
		return s.label.Render(fmt.Sprintf(" %-6s", label)) + " " + value
	}
	var lines []string
	if l.title {
		lines = append(lines, s.title.Render(" fsplane connect"))
	}
	if l.hub {
		lines = append(lines, row("Hub", s.value.Render(host.RedactURL(m.opts.HubURL))))
	}
	if l.state {
		lines = append(lines, row("State", m.stateText()))
	}
	if l.host {
		lines = append(lines, row("Host", s.value.Render(host.Printable(m.opts.Name, 0))))
	}
	roots := m.opts.Roots
	for i := range l.roots {
		label := ""
		if i == 0 {
			label = "Roots"
		}
		more := len(roots) - i - 1 // after this one
		switch {
		case i < l.roots-1 || more == 0:
			lines = append(lines, row(label, s.value.Render(PathText(roots[i]))))
		case i == 0:
			// A single row for many roots: the first, and the count.
			lines = append(lines, row(label, s.value.Render(PathText(roots[0]))+s.dim.Render(fmt.Sprintf("  … and %d more", more))))
		default:
			lines = append(lines, row(label, s.dim.Render(fmt.Sprintf("… and %d more", more+1))))
		}
	}
	return lines
}

func (m Model) stateText() string {
	s := m.st
	switch m.state {
	case host.Connected:
		return s.ok.Render("connected as " + host.Printable(m.hostID, 100))
	case host.Reconnecting:
		t := "reconnecting…"
		if left := m.retryAt.Sub(m.now); left > 0 {
			// Rounded up: "in 0.0s" would be a wait that is over.
			t = fmt.Sprintf("reconnecting in %.1fs", (left + tickEvery - 1).Truncate(tickEvery).Seconds())
		}
		if m.reason != "" {
			t += " — " + host.Printable(m.reason, 200)
		}
		return s.warn.Render(t)
	case host.Failed:
		return s.bad.Render("error: " + host.Printable(m.reason, 200))
	case host.Stopped:
		return s.dim.Render("stopped")
	}
	return s.warn.Render("connecting…")
}

// modeBadge shows the mode the host is in, padded when the window has
// room for it.
func (m Model) modeBadge() string {
	st := m.st.ro
	if m.mode == proto.ReadWrite {
		st = m.st.rw
	}
	label := ModeLabel(m.mode)
	if m.wm.StringWidth(label)+2 <= m.width {
		label = " " + label + " "
	}
	return st.Render(label)
}

// footer returns the last row: the mode, and after it a pending change,
// the keys and the scroll position.
func (m Model) footer() (mode, rest string) {
	s := m.st
	if m.pending != "" {
		rest = s.warn.Render("  switching to " + ModeLabel(m.pending) + "…")
	}
	help := "  " + s.key.Render("F3") + s.dim.Render(" toggle") + "  " + s.key.Render("↑↓") + s.dim.Render(" scroll") + "  " + s.key.Render("q") + s.dim.Render(" quit")
	if m.scroll > 0 {
		help += s.warn.Render(fmt.Sprintf("  (%d newer below; End follows)", m.scroll))
	}
	return m.modeBadge(), rest + help
}

// fitAfter fits first and then rest into w cells, cutting rest before
// first: the mode before the keys.
func (m Model) fitAfter(first, rest string, w int) string {
	if fw := m.wm.StringWidth(first); fw < w {
		return first + m.wm.Truncate(rest, w-fw, "…")
	}
	return m.wm.Truncate(first, w, "…")
}

// logHeight is the number of log rows the window shows.
func (m Model) logHeight() int { return m.layout().log }

// maxScroll is how far back the log scrolls: to its first line at the top
// of the rows shown (or, with no row, the first line).
func (m Model) maxScroll() int { return max(len(m.log)-max(m.logHeight(), 1), 0) }

// View implements tea.Model: the screen (Model.screen) on the alternate
// screen, the whole window's.
func (m Model) View() tea.View {
	v := tea.NewView(m.screen())
	v.AltScreen = true
	return v
}

// screen is the view's text. It has exactly m.height rows, none wider
// than m.width cells: what it shows is Model.layout's choice.
func (m Model) screen() string {
	w := m.width
	if w <= 0 || m.height <= 0 {
		return ""
	}
	l := m.layout()
	fit := func(s string) string { return m.wm.Truncate(s, w, "…") }
	if l.single {
		return m.fitAfter(m.modeBadge(), " "+m.stateText(), w)
	}
	var rows []string
	for _, r := range m.header(l) {
		rows = append(rows, fit(r))
	}
	rule := m.st.rule.Render(strings.Repeat("─", w))
	if l.rules {
		rows = append(rows, rule)
	}
	end := len(m.log) - m.scroll
	start := max(end-l.log, 0)
	for _, line := range m.log[start:end] {
		rows = append(rows, line.fit(w, m.wm))
	}
	for range l.log - (end - start) {
		rows = append(rows, "")
	}
	if l.rules {
		rows = append(rows, rule)
	}
	if l.footer {
		mode, rest := m.footer()
		rows = append(rows, m.fitAfter(mode, rest, w))
	}
	return strings.Join(rows, "\n")
}
