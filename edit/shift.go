package edit

import (
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Shift says that the lines From..To of the original content (1-based,
// inclusive; To == 0: to the end) stand By lines further down in the new
// content (up when By < 0). A line an edit changed counts where the text
// after the edit went: "x" → "a\nx" in line 3 moves line 3 by +1. A model that edits by line numbers needs it:
// its own change keeps its view of the file fresh (no stale_version), so
// nothing else would tell it that the numbers it read have moved.
type Shift struct {
	From, To, By int
}

// LineShifts describes how edits (relative to old, non-overlapping) moved
// the lines of old, out being the edited content.
// Lines no edit follows are not described; neither is a change that only
// rewrites lines in place (every By is 0), for which it returns nil.
func LineShifts(old, out []byte, edits []Edit) []Shift {
	sorted, err := sortEdits(old, edits)
	if err != nil || len(sorted) == 0 {
		return nil
	}
	oi, ni := newLines(old), newLines(out)
	var shifts []Shift
	moved, cum := false, 0
	for i, e := range sorted {
		cum += len(e.New) - (e.End - e.Start)
		if e.End >= len(old) {
			break // nothing of old follows
		}
		// The line the edit ends in holds old text from e.End on: it
		// is where that text now is, wherever its start went.
		line := oi.lineOf(e.End)
		if line >= oi.count() {
			break
		}
		to := 0
		if i+1 < len(sorted) {
			// Up to the line the next edit starts in, which the next
			// shift describes (by where its rest went), if it is not
			// changed away.
			to = oi.lineOf(sorted[i+1].Start)
			if to <= line {
				continue // the next edit starts on this very line
			}
		}
		first := line
		by := ni.lineOf(e.End+cum) - line
		moved = moved || by != 0
		if n := len(shifts); n > 0 && shifts[n-1].By == by && shifts[n-1].To == first {
			shifts[n-1].To = to
			continue
		}
		shifts = append(shifts, Shift{From: first + 1, To: to, By: by})
	}
	if !moved {
		return nil
	}
	return shifts
}

// TextShifts is LineShifts for two whole texts, diffed line by line (a
// patch's result carries no edits of its own).
func TextShifts(old, new []byte) []Shift {
	if string(old) == string(new) {
		return nil
	}
	d := udiff.Lines(string(old), string(new))
	edits := make([]Edit, len(d))
	for i, e := range d {
		edits[i] = Edit{Start: e.Start, End: e.End, New: e.New}
	}
	return LineShifts(old, new, edits)
}

// maxShiftsShown bounds the ranges ShiftNote lists.
const maxShiftsShown = 4

// ShiftNote words shifts for a model, in the numbering before the change
// ("" when no line moved): for one range, from which line numbers moved
// and by how much; for several, each moved range (the first few and the
// last, with how many were left out), so the statement stays short and
// every line it names is right.
func ShiftNote(shifts []Shift) string {
	var moved []Shift
	for _, s := range shifts {
		if s.By != 0 {
			moved = append(moved, s)
		}
	}
	switch {
	case len(moved) == 0:
		return ""
	case len(shifts) == 1 && moved[0].To == 0:
		s := moved[0]
		return fmt.Sprintf("lines from line %d on moved by %+d (line %d is now line %d)", s.From, s.By, s.From, s.From+s.By)
	}
	parts := make([]string, 0, maxShiftsShown+1)
	for i, s := range moved {
		if len(moved) > maxShiftsShown && i == maxShiftsShown-1 {
			parts = append(parts, fmt.Sprintf("%d more ranges", len(moved)-maxShiftsShown))
			s = moved[len(moved)-1]
			parts = append(parts, shiftSpan(s))
			break
		}
		parts = append(parts, shiftSpan(s))
	}
	return "line numbers moved (numbered as before this change): " + strings.Join(parts, ", ") + "; lines not named kept their numbers or were changed"
}

func shiftSpan(s Shift) string {
	switch {
	case s.To == 0:
		return fmt.Sprintf("from line %d on by %+d", s.From, s.By)
	case s.To == s.From:
		return fmt.Sprintf("line %d by %+d", s.From, s.By)
	}
	return fmt.Sprintf("lines %d-%d by %+d", s.From, s.To, s.By)
}
