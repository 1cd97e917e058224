package edit

import (
	"strconv"
	"strings"
)

// ViewDir renders a directory as Anthropic's str_replace_editor views
// one: "Here's the files and directories up to 2 levels deep in {dir},
// excluding hidden items:\n{listing}\n", where the listing is what
// `find {dir} -maxdepth 2 -not -path '*/.*'` prints: dir as given, then
// each entry as dir joined with its relative path, one a line. rels are
// the entries' slash-separated paths relative to dir, in the order to
// show. cut, when positive, says the listing stopped at that many
// entries, in a line after it, so a reader never takes it for the whole.
func ViewDir(dir string, rels []string, cut int) string {
	var b strings.Builder
	b.WriteString("Here's the files and directories up to 2 levels deep in ")
	b.WriteString(dir)
	b.WriteString(", excluding hidden items:\n")
	b.WriteString(dir)
	b.WriteByte('\n')
	// find joins without doubling a trailing slash: "/" gives "/bin",
	// "/srv/" gives "/srv/a".
	prefix := strings.TrimRight(dir, "/") + "/"
	for _, r := range rels {
		b.WriteString(prefix)
		b.WriteString(r)
		b.WriteByte('\n')
	}
	if cut > 0 {
		b.WriteString("[listing cut at " + strconv.Itoa(cut) + " entries; view a subdirectory to see the rest]\n")
	}
	b.WriteByte('\n')
	return b.String()
}
