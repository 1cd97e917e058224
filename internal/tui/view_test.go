package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/fsplane/fsplane/internal/connector/host"
)

// longPath is the path of the reported bug: at 120 columns its write
// lost its result and duration.
const longPath = "very/long/directory/structure/that/goes/on/and/on/through/many/levels/of/nesting/down/to/the/depths/final_file_with_a_long_name.txt"

// shown is what of s a row w cells wide can show: all of it or its
// start and an ellipsis.
func shown(s string, w int) string { return ansi.Truncate(s, w, "…") }

// TestViewAtEverySize resizes one model through many window sizes, down
// to 1×1, and back: the view never has more rows or columns than the
// window, always shows what matters most (the mode and state first, then
// the hub, the host, the roots and the log), and a large window again
// shows the full screen.
func TestViewAtEverySize(t *testing.T) {
	t.Parallel()
	m := send(newModel(&modeCalls{}), session()...)
	m = send(m, op(10*time.Second, "write", longPath, "ok", 16*time.Millisecond),
		reconnecting(11*time.Second, 1200*time.Millisecond))
	full := send(m, tea.WindowSizeMsg{Width: 120, Height: 30}).View().Content
	// Each thing shown once the window has at least rows rows, in the
	// order of Model.layout.
	wants := []struct {
		rows int
		text string
	}{
		{1, "Read-only"},
		{2, "reconnecting"},
		{3, "ws://127.0.0.1:18091/v2/connector"},
		{4, "ada-laptop"},
		{5, "/home/ada/project"},
		{6, "/home/ada/notes"},
		{7, "15:04:16  connection lost (closed abruptly); reconnecting in 1.2s"},
	}
	for _, size := range []tea.WindowSizeMsg{
		{Width: 120, Height: 30}, {Width: 80, Height: 20}, {Width: 40, Height: 10}, {Width: 20, Height: 6},
		{Width: 15, Height: 6}, {Width: 10, Height: 4}, {Width: 30, Height: 3}, {Width: 10, Height: 2},
		{Width: 40, Height: 1}, {Width: 1, Height: 1}, {Width: 3, Height: 9}, {Width: 200, Height: 7},
	} {
		t.Run(fmt.Sprintf("%dx%d", size.Width, size.Height), func(t *testing.T) {
			m = send(m, size)
			v := m.View().Content
			lines := strings.Split(v, "\n")
			if len(lines) != size.Height {
				t.Errorf("the view has %d rows:\n%s", len(lines), v)
			}
			for _, l := range lines {
				if w := ansi.StringWidth(l); w > size.Width {
					t.Errorf("row %q is %d wide", l, w)
				}
			}
			for _, w := range wants {
				if size.Height < w.rows {
					continue
				}
				// At least half the row is the value, labels or not.
				if s := ansi.Truncate(w.text, size.Width/2, ""); !strings.Contains(v, s) {
					t.Errorf("with %d rows the view lacks %q:\n%s", size.Height, s, v)
				}
			}
			if f := lines[len(lines)-1]; !strings.Contains(f, shown("Read-only", size.Width)) {
				t.Errorf("the last row %q does not show the mode", f)
			}
		})
	}
	if got := send(m, tea.WindowSizeMsg{Width: 120, Height: 30}).View().Content; got != full {
		t.Errorf("back at 120x30 the view differs:\n%s\nwant:\n%s", got, full)
	}
}

// TestLongLogLines: a log line too long for the window keeps its time,
// op, result and duration, and loses the middle of its path (or message)
// instead, measured in cells: wide characters count two, and a hostile
// path's control characters none reach the screen.
func TestLongLogLines(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		ev    EventMsg
		start string // the row starts with it
		end   string // and ends with it
		keep  string // and shows this end of the path or message
	}{
		{"long path", op(time.Second, "write", longPath, "ok", 16*time.Millisecond),
			"15:04:06  write      ", "  ok  16ms", "_name.txt"},
		{"wide characters", op(time.Second, "read", strings.Repeat("長いディレクトリ/", 12)+"最後のファイル.txt", "not_found", 3*time.Millisecond),
			"15:04:06  read       長", "  not_found  3ms", "ファイル.txt"},
		{"emoji and combining marks", op(time.Second, "stat", strings.Repeat("🇯🇵e\u0301🙂/", 20)+"x.txt", "ok", time.Millisecond),
			"15:04:06  stat       🇯🇵", "  ok  1ms", "🙂/x.txt"},
		{"control characters", op(time.Second, "read", strings.Repeat("evil\x1b[2J/", 20)+"end.txt", "outside_root", time.Millisecond),
			`15:04:06  read       "evil`, `  outside_root  1ms`, `end.txt"`},
		{"not delivered", EventMsg{Time: t0.Add(time.Second), Kind: host.EventOp,
			Op: &host.OpRecord{Op: "grep", Path: strings.Repeat("deep/", 40), Result: "ok", Duration: 2 * time.Second}},
			"15:04:06  grep       deep/", "  ok  2s  (not delivered)", "deep/"},
		{"disconnected", state(time.Second, host.Reconnecting, "", 1200*time.Millisecond,
			"connection lost: "+strings.Repeat("read tcp 127.0.0.1:1->127.0.0.1:2: ", 6)+"connection reset by peer"),
			"15:04:06  conn", "; reconnecting in 1.2s", "peer"},
	} {
		for _, width := range []int{250, 120, 80, 60} {
			t.Run(fmt.Sprintf("%s at %d", tt.name, width), func(t *testing.T) {
				t.Parallel()
				m := send(newModel(&modeCalls{}), tea.WindowSizeMsg{Width: width, Height: 20}, tt.ev)
				var row string // the only log row
				for _, l := range strings.Split(m.View().Content, "\n") {
					if strings.HasPrefix(l, "15:04:06") {
						row = l
					}
				}
				full := m.Log()[len(m.Log())-1]
				if w := ansi.StringWidth(row); w > width {
					t.Errorf("row %q is %d wide", row, w)
				}
				if ansi.StringWidth(full) <= width {
					if row != full {
						t.Errorf("a line that fits was changed: %q, want %q", row, full)
					}
					return
				}
				if !strings.HasPrefix(row, tt.start) || !strings.HasSuffix(row, tt.end) || !strings.Contains(row, "…") {
					t.Errorf("row %q: want %q…%q", row, tt.start, tt.end)
				}
				if !strings.Contains(row, tt.keep+tt.end) {
					t.Errorf("row %q lost %q", row, tt.keep)
				}
				if w := ansi.StringWidth(row); w < width-1 {
					t.Errorf("row %q is %d wide; the window has %d columns", row, w, width)
				}
			})
		}
	}
}

// TestLongPathKeepsBothEnds: the log lines of one long path, whatever
// their result, keep the start of the path and its end and lose the
// middle. A name too long to fit whole used to take all the room: at 60
// columns one result showed "ver…/file_with_a_long_name.txt", the next
// "…with_a_long_name.txt  not_found", without a directory.
func TestLongPathKeepsBothEnds(t *testing.T) {
	t.Parallel()
	for _, path := range []string{longPath, "very/long/" + strings.Repeat("x", 40) + "/file_with_a_long_name.txt"} {
		for _, result := range []string{"ok", "read_only", "not_found", "outside_root", host.ResultCancelled} {
			for _, width := range []int{60, 80} {
				m := send(newModel(&modeCalls{}), tea.WindowSizeMsg{Width: width, Height: 20}, op(time.Second, "write", path, result, 3*time.Millisecond))
				var row string
				for _, l := range strings.Split(m.View().Content, "\n") {
					if strings.HasPrefix(l, "15:04:06") {
						row = l
					}
				}
				mid, _, _ := strings.Cut(strings.TrimPrefix(row, "15:04:06  write      "), "  "+result)
				pre, suf, ok := strings.Cut(mid, "…")
				if !ok || len(pre) < startCells || !strings.HasPrefix(path, pre) || len(suf) < len("_name.txt") || !strings.HasSuffix(path, suf) {
					t.Errorf("%s at %d: row %q does not keep the start and the end of %q", result, width, row, path)
				}
			}
		}
	}
}

// TestViewMeasuresAsTheRenderer: bubbletea lays the view out in wcwidth
// cells until the terminal reports Unicode core (mode 2027), and in
// grapheme clusters after. A path whose emoji the two measure apart
// (👍🏽 is 2 cells as a cluster, 4 by wcwidth) used to be fitted by
// grapheme width alone: in most terminals the renderer found the row
// too wide and cut its end, the result and the duration ("not_found
// 0.1").
func TestViewMeasuresAsTheRenderer(t *testing.T) {
	t.Parallel()
	path := "/home/ada/" + strings.Repeat("👍🏽", 30) + "/x.txt"
	for _, tt := range []struct {
		name   string
		report []tea.Msg
		method ansi.Method
	}{
		{"wcwidth", nil, ansi.WcWidth},
		{"unicode core", []tea.Msg{tea.ModeReportMsg{Mode: ansi.ModeUnicodeCore, Value: ansi.ModeReset}}, ansi.GraphemeWidth},
	} {
		for _, width := range []int{80, 100, 140} {
			t.Run(fmt.Sprintf("%s at %d", tt.name, width), func(t *testing.T) {
				t.Parallel()
				m := send(newModel(&modeCalls{}), tt.report...)
				m = send(m, tea.WindowSizeMsg{Width: width, Height: 12}, op(time.Second, "read", path, "not_found", 3*time.Millisecond))
				for _, l := range strings.Split(m.View().Content, "\n") {
					if w := tt.method.StringWidth(l); w > width {
						t.Errorf("row %q is %d cells wide by the renderer's measure", l, w)
					}
					if strings.HasPrefix(l, "15:04:06") && !strings.HasSuffix(l, "x.txt  not_found  3ms") {
						t.Errorf("row %q lost its end", l)
					}
				}
			})
		}
	}
}
