package patch

import "strings"

// Format renders p as canonical Codex apply_patch text, whatever
// p.Dialect: "*** Begin Patch", then per file its header ("*** Move to:"
// after an Update header when MoveTo is set), an Add's lines each prefixed
// with "+", an Update's chunks, and "*** End Patch"; every line ends in
// "\n". A chunk is rendered as one "@@ <anchor>" line per anchor (a bare
// "@@" when it has none), then the lines Old and New share at the start as
// " " lines, the rest of Old as "-" lines, the rest of New as "+" lines,
// the lines they share at the end as " " lines, and "*** End of File" if
// EOF is set.
//
// For every p returned by Parse or ParseAgentZero, Parse(Format(p)) equals
// p except for Dialect (always Codex) and the Line fields (which number
// the lines of the text p was parsed from); Format(Parse(x)) is therefore
// the canonical form of x, and Format is idempotent on it. Format does not
// validate: FileOps of an unknown Kind are left out, and a Patch that
// Parse could not have produced (an Update without chunks, a chunk with
// neither Old nor New lines, a line holding a line break, a path with
// surrounding white space) may not parse back.
func Format(p *Patch) string {
	var b strings.Builder
	line := func(parts ...string) {
		for _, s := range parts {
			b.WriteString(s)
		}
		b.WriteByte('\n')
	}
	line(codexBeginMarker)
	for _, f := range p.Files {
		switch f.Kind {
		case Add:
			line(codexAddMarker, f.Path)
			for _, l := range f.Lines {
				line("+", l)
			}
		case Delete:
			line(codexDeleteMarker, f.Path)
		case Update:
			line(codexUpdateMarker, f.Path)
			if f.MoveTo != "" {
				line(codexMoveMarker, f.MoveTo)
			}
			for _, c := range f.Chunks {
				if len(c.Anchors) == 0 {
					line(codexEmptyAnchor)
				}
				for _, a := range c.Anchors {
					line(codexAnchorMarker, a)
				}
				pre, suf := formatCommon(c.Old, c.New)
				for _, l := range c.Old[:pre] {
					line(" ", l)
				}
				for _, l := range c.Old[pre : len(c.Old)-suf] {
					line("-", l)
				}
				for _, l := range c.New[pre : len(c.New)-suf] {
					line("+", l)
				}
				for _, l := range c.Old[len(c.Old)-suf:] {
					line(" ", l)
				}
				if c.EOF {
					line(codexEOFMarker)
				}
			}
		}
	}
	line(codexEndMarker)
	return b.String()
}

// formatCommon returns the length of the longest common prefix of a and
// b, and of the longest common suffix of what follows that prefix.
func formatCommon(a, b []string) (pre, suf int) {
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	return pre, suf
}
