package edit

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The *IsLinear tests run inputs that take well under a second when the
// work is linear and minutes when it is quadratic: they assert only the
// results, and a quadratic regression shows as a test that does not end
// (go test's -timeout), not as a timed assertion.

// TestReplaceAllOnALongLineIsLinear: replace mode all on a long line (a
// minified file) costs the line once, not once per match.
func TestReplaceAllOnALongLineIsLinear(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		content string
	}{
		{"unterminated", strings.Repeat("ab", 200_000)},
		{"terminated", strings.Repeat("ab", 200_000) + "\r\n" + "x\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, diff := range []bool{false, true} {
				func() {
					r, err := Replace([]byte(tt.content), "a", "c", ReplaceOptions{Mode: ModeAll, Diff: diff})
					if err != nil {
						t.Error(err)
						return
					}
					if want := strings.ReplaceAll(tt.content, "a", "c"); string(r.Content) != want || r.Count != 200_000 {
						t.Errorf("count %d, content changed otherwise than by each match", r.Count)
					}
				}()
			}
		})
	}
}

// TestLineWindowsAreLinear: the line-window tiers (trailing whitespace,
// indentation) stay linear when every line of old is frequent in the
// file and windows nearly match everywhere.
func TestLineWindowsAreLinear(t *testing.T) {
	t.Parallel()
	content := strings.Repeat("a\n", 200_000)
	for _, tt := range []struct {
		name, old, want string
		tier            Tier
	}{
		{"trailing whitespace, no match", strings.Repeat("a  \n", 2000) + "b", "", 0},
		{"indentation, no match", strings.Repeat("  a\n", 2000) + "  b", "", 0},
		{"trailing whitespace at the end", strings.Repeat("a  \n", 2000) + "b", strings.Repeat("a\n", 198_000) + "x\n", TierTrailingSpace},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := content
			if tt.want != "" {
				c += "b\n"
			}
			func() {
				tier, ms := Locate([]byte(c), tt.old, false)
				if tier != tt.tier {
					t.Errorf("tier %v, want %v (%d matches)", tier, tt.tier, len(ms))
				}
				if tt.want == "" {
					return
				}
				r, err := Replace([]byte(c), tt.old, "x", ReplaceOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				if string(r.Content) != tt.want {
					t.Errorf("wrong content")
				}
			}()
		})
	}
}

// TestFindBlockIsLinear: FindBlock (a patch hunk's search) stays linear
// when every wanted line is frequent in the file.
func TestFindBlockIsLinear(t *testing.T) {
	t.Parallel()
	d := NewDoc([]byte(strings.Repeat("a\n", 200_000)))
	want := strings.Split(strings.Repeat("a\n", 2000)+"b", "\n")
	func() {
		if tier, blocks := d.FindBlock(want, 0, false); len(blocks) != 0 {
			t.Errorf("tier %v, %d blocks, want none", tier, len(blocks))
		}
	}()
}

// TestLineIndexAgreesWithScans: the line index's startOf and endOf are
// lineStart and lineEnd.
func TestLineIndexAgreesWithScans(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"", "a", "a\n", "a\r\nb", "a\rb\r", "\r\n\r\n", "ab\r\ncd\nef\r", BOM + "x\r\n", "\n\n\r"} {
		idx := newLines([]byte(c))
		for off := 0; off <= len(c); off++ {
			if got, want := idx.startOf(off), lineStart([]byte(c), off); got != want {
				t.Errorf("%q: startOf(%d) = %d, lineStart %d", c, off, got, want)
			}
			if got, want := idx.endOf(off), lineEnd([]byte(c), off); got != want {
				t.Errorf("%q: endOf(%d) = %d, lineEnd %d", c, off, got, want)
			}
		}
	}
}

// TestKeyedWindowsMatchesItsDefinition checks keyedWindows against
// comparing every window's keys, on random documents built to make the
// keys collide.
func TestKeyedWindowsMatchesItsDefinition(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		doc := NewDoc([]byte(randomDoc(r)))
		want := randomWant(r, doc)
		if len(want) == 0 {
			continue
		}
		key := []func([]byte) []byte{rstripBytes, bytes.TrimSpace, punctTrimmed}[r.IntN(3)]
		keys := make([]string, len(want))
		for j, w := range want {
			keys[j] = string(key([]byte(w)))
		}
		first, last := r.IntN(3), doc.Len()-len(want)
		var def []int
		for i := first; i <= last; i++ {
			ok := true
			for j := range keys {
				ok = ok && string(key(doc.idx.text(i+j))) == keys[j]
			}
			if ok {
				def = append(def, i)
			}
		}
		stop := -1
		if len(def) > 1 && r.IntN(2) == 0 {
			stop = def[r.IntN(len(def))]
			def = def[:slices.Index(def, stop)+1]
		}
		var got []int
		keyedWindows(doc.idx, key, keys, first, last, func(i int) bool {
			got = append(got, i)
			return i == stop
		})
		if !slices.Equal(got, def) {
			t.Fatalf("doc %q, keys %q from %d: keyedWindows %v, want %v", doc.content, keys, first, got, def)
		}
	}
}

// TestTrimmedOnALongLineIsLinear: the trimmed tier judges each occurrence
// of the trimmed old text by the blanks around it, not by its whole line,
// so a frequent one on a long line (a minified file) is not quadratic.
func TestTrimmedOnALongLineIsLinear(t *testing.T) {
	t.Parallel()
	content := strings.Repeat("ab ", 300_000) + "\n"
	func() {
		r, err := Replace([]byte(content), "ab\n\n", "x", ReplaceOptions{})
		if err != nil {
			t.Error(err)
			return
		}
		if want := strings.Repeat("ab ", 299_999) + "x \n"; r.Tier != TierTrimmed || string(r.Content) != want {
			t.Errorf("tier %v, content ends %q", r.Tier, r.Content[len(r.Content)-10:])
		}
	}()
}
