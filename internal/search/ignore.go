package search

import (
	"bytes"
	"slices"
	"strings"

	"github.com/fsplane/fsplane/edit"
)

// An ignorePattern is one non-comment line of an ignore file, parsed the
// way git parses .gitignore lines.
type ignorePattern struct {
	glob    string // the pattern without '!', trailing '/' and leading '/'
	negate  bool   // "!pattern": re-include what an earlier line excluded
	dirOnly bool   // "pattern/": matches directories only
	// baseName patterns (no '/' other than a trailing one) match the last
	// path component at any depth; the others match the whole path
	// relative to the ignore file's directory.
	baseName bool
	kind     patternKind
	line     int // 1-based line number in its file
}

// patternKind selects a fast path for common patterns.
type patternKind uint8

const (
	kindGlob    patternKind = iota // general wildmatch
	kindLiteral                    // no wildcard: byte comparison
	kindSuffix                     // "*literal" as a base name: suffix test
)

// ignoreList is the patterns of one ignore file (or one set of -g globs),
// in file order; the last pattern that matches decides.
type ignoreList struct {
	source string // for diagnostics: the file it came from
	pats   []ignorePattern
}

// parseIgnore parses the content of an ignore file: blank lines and lines
// starting with '#' are skipped, "\#" and "\!" escape a leading '#' or
// '!', unescaped trailing spaces are dropped, a CR before the LF is
// dropped, a UTF-8 BOM at the start is skipped. It never fails: a
// malformed pattern (an unterminated class) matches nothing, as in git.
func parseIgnore(source string, content []byte) *ignoreList {
	l := &ignoreList{source: source}
	content, _ = edit.StripBOM(content)
	lineNo := 0
	for len(content) > 0 {
		lineNo++
		var line []byte
		if i := bytes.IndexByte(content, '\n'); i >= 0 {
			line, content = content[:i], content[i+1:]
		} else {
			line, content = content, nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if p, ok := parsePattern(string(line)); ok {
			p.line = lineNo
			l.pats = append(l.pats, p)
		}
	}
	return l
}

// parsePattern parses one line; ok is false for blank lines and comments.
func parsePattern(line string) (ignorePattern, bool) {
	if line == "" || line[0] == '#' {
		return ignorePattern{}, false
	}
	line = trimTrailingSpaces(line)
	var p ignorePattern
	if line != "" && line[0] == '!' {
		p.negate = true
		line = line[1:]
	}
	if line != "" && line[len(line)-1] == '/' {
		p.dirOnly = true
		line = line[:len(line)-1]
	}
	p.baseName = strings.IndexByte(line, '/') < 0
	if !p.baseName && line[0] == '/' {
		line = line[1:]
	}
	p.glob = line
	switch {
	case !hasWildcard(line):
		p.kind = kindLiteral
	case p.baseName && line[0] == '*' && !hasWildcard(line[1:]):
		p.kind = kindSuffix
	}
	return p, true
}

// trimTrailingSpaces drops trailing ' ' that are not escaped by '\'.
func trimTrailingSpaces(s string) string {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i >= len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
}

func hasWildcard(s string) bool {
	return strings.ContainsAny(s, "*?[\\")
}

// match reports whether p matches the path rel (slash-separated, relative
// to the ignore file's directory, no leading or trailing '/'), whose last
// component is name.
func (p *ignorePattern) match(rel, name string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	subject := rel
	if p.baseName {
		subject = name
	}
	switch p.kind {
	case kindLiteral:
		return subject == p.glob
	case kindSuffix:
		return strings.HasSuffix(subject, p.glob[1:])
	}
	return wildmatch(p.glob, subject, !p.baseName)
}

// decision is the verdict of an ignore list (or a stack of them) on a path.
type decision uint8

const (
	noMatch  decision = iota // no pattern matched
	ignored                  // the last matching pattern excludes
	included                 // the last matching pattern is a negation
)

// match returns the verdict of the list's last matching pattern.
func (l *ignoreList) match(rel, name string, isDir bool) decision {
	for i := len(l.pats) - 1; i >= 0; i-- {
		p := &l.pats[i]
		if p.match(rel, name, isDir) {
			if p.negate {
				return included
			}
			return ignored
		}
	}
	return noMatch
}

// ignoreKind orders the ignore sources by precedence, as ripgrep does: a
// match in any .ignore beats one in any .gitignore, which beats
// .git/info/exclude.
type ignoreKind uint8

const (
	kindDotIgnore ignoreKind = iota
	kindGitignore
	kindExclude
	numIgnoreKinds
)

// ignoreFrame is the ignore files of one directory, linked to the frame of
// the nearest ancestor directory that had any. Frames are immutable once
// built and shared by every goroutine walking below them.
type ignoreFrame struct {
	parent *ignoreFrame
	base   string // directory of the files, relative to the walk start ("" = start)
	// prefix is set on the frames of the start's ancestors: the path of
	// the start relative to the frame's directory.
	prefix string
	lists  [numIgnoreKinds]*ignoreList
	// repoRoot marks a directory holding ".git": gitignore files above it
	// do not apply inside it (as in git and ripgrep).
	repoRoot bool
	// inRepo: this frame or one above it is a repoRoot; the global
	// excludes file applies (see GlobalIgnore). Set by seal.
	inRepo bool
	// negates: a file of this frame or one above it has a "!" line, so
	// it may re-include a hidden entry (see walker.admit). Set by seal.
	negates bool
}

// seal sets the fields derived from the frame's parents, once the frame
// is complete and before it is shared.
func (f *ignoreFrame) seal() *ignoreFrame {
	f.inRepo = f.repoRoot || f.parent != nil && f.parent.inRepo
	f.negates = f.parent != nil && f.parent.negates
	for _, l := range f.lists {
		f.negates = f.negates || l.negates()
	}
	return f
}

// negates reports whether the list has a "!" line; nil has none.
func (l *ignoreList) negates() bool {
	if l == nil {
		return false
	}
	return slices.ContainsFunc(l.pats, func(p ignorePattern) bool { return p.negate })
}

// ignoreDecision is the verdict on the entry rel (relative to the start)
// of the ignore files of frame or, when they say nothing and the entry
// is inside a git repository, of the global excludes file.
func (w *walker[T]) ignoreDecision(frame *ignoreFrame, rel, name string, isDir bool) decision {
	d := frame.decide(rel, name, isDir)
	if d == noMatch && w.o.global != nil && frame.inRepo {
		d = w.o.global.match(w.o.globalPrefix+rel, name, isDir)
	}
	return d
}

// decide applies the frames from the deepest up: within a kind the deepest
// file with a matching pattern decides; across kinds the precedence of
// ignoreKind applies. rel is relative to the walk start.
func (f *ignoreFrame) decide(rel, name string, isDir bool) decision {
	for k := ignoreKind(0); k < numIgnoreKinds; k++ {
		for fr := f; fr != nil; fr = fr.parent {
			if l := fr.lists[k]; l != nil {
				sub := rel
				switch {
				case fr.prefix != "":
					sub = fr.prefix + "/" + rel
				case fr.base != "":
					sub = rel[len(fr.base)+1:]
				}
				if d := l.match(sub, name, isDir); d != noMatch {
					return d
				}
			}
			if fr.repoRoot && k != kindDotIgnore {
				break
			}
		}
	}
	return noMatch
}
