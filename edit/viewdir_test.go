package edit

import "testing"

func TestViewDir(t *testing.T) {
	t.Parallel()
	const head = "Here's the files and directories up to 2 levels deep in "
	tests := []struct {
		name, dir string
		rels      []string
		cut       int
		want      string
	}{
		{"empty", "/srv", nil, 0, head + "/srv, excluding hidden items:\n/srv\n\n"},
		{"entries", "/srv", []string{"a", "a/b", "z"}, 0, head + "/srv, excluding hidden items:\n/srv\n/srv/a\n/srv/a/b\n/srv/z\n\n"},
		{"trailing slash", "/srv/", []string{"a"}, 0, head + "/srv/, excluding hidden items:\n/srv/\n/srv/a\n\n"},
		{"root", "/", []string{"bin"}, 0, head + "/, excluding hidden items:\n/\n/bin\n\n"},
		{"relative", ".", []string{"a"}, 0, head + "., excluding hidden items:\n.\n./a\n\n"},
		{"cut", "/srv", []string{"a"}, 1, head + "/srv, excluding hidden items:\n/srv\n/srv/a\n[listing cut at 1 entries; view a subdirectory to see the rest]\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := ViewDir(tc.dir, tc.rels, tc.cut); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
