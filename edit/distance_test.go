package edit

import "testing"

func TestDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"expectedversion", "expectedversion", 0},
		{"expectedverison", "expectedversion", 2}, // swapped neighbours: two substitutions
		{"expectedverson", "expectedversion", 1},
		{"expectedversions", "expectedversion", 1},
		{"dryrun", "run", 3},
		{"kitten", "sitting", 3},
		{"naïve", "naive", 1}, // runes, not bytes
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.want)
		}
	}
}
