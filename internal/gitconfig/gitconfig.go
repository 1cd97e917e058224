// Package gitconfig reads one value from the text of a git configuration
// file, for the command line, which honours git's global excludes file
// (core.excludesFile) as ripgrep does. It parses git's syntax the way
// git's config.c does: [section], [section "subsection"] and the old
// [section.subsection] headers, case-insensitive section and variable
// names, values with quotes, escapes (\\ \" \n \t \b), line
// continuations and '#' or ';' comments, a CR before a LF. It does not
// follow [include] or [includeIf]: a value set only in an included file
// is not seen. It reads no files itself.
package gitconfig

import (
	"fmt"
	"strings"
)

// Lookup returns the value the config text data sets for key, the last
// one set as with git: key is "section.name" or
// "section.subsection.name"; the section and the name compare
// case-insensitively, a subsection exactly (except in the old dotted
// header form, which git lowercases). ok is false when the key is not
// set, or only without "=" (git's boolean true, which is no path). On a
// syntax error, which makes git refuse the whole file, err says which
// line and value and ok are what the lines before it set.
func Lookup(data []byte, key string) (value string, ok bool, err error) {
	want := canonicalKey(key)
	p := &parser{data: data, line: 1}
	if strings.HasPrefix(string(data), "\ufeff") {
		p.pos = 3
	}
	err = p.parse(func(name string, v *string) {
		if name != want {
			return
		}
		if v == nil {
			value, ok = "", false
			return
		}
		value, ok = *v, true
	})
	return value, ok, err
}

// canonicalKey lowercases a key's section and name, not its subsection.
func canonicalKey(key string) string {
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if first < 0 {
		return strings.ToLower(key)
	}
	return strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:])
}

type parser struct {
	data []byte
	pos  int
	line int
	eof  bool
}

// next returns the next byte, "\r\n" as '\n' and the end as '\n' (with
// eof set), as git's get_next_char.
func (p *parser) next() byte {
	if p.pos >= len(p.data) {
		p.eof = true
		return '\n'
	}
	c := p.data[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.data) && p.data[p.pos] == '\n' {
		c = '\n'
		p.pos++
	}
	if c == '\n' {
		p.line++
	}
	return c
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isKeyChar(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// parse calls fn with each variable's full name (section lowercased) and
// value (nil for a name without "="), in file order.
func (p *parser) parse(fn func(name string, value *string)) error {
	var section []byte // "section." or "section.subsection."
	comment := false
	for {
		c := p.next()
		switch {
		case c == '\n':
			if p.eof {
				return nil
			}
			comment = false
			continue
		case comment, isSpace(c):
			continue
		case c == '#' || c == ';':
			comment = true
			continue
		case c == '[':
			start := p.line
			var ok bool
			if section, ok = p.header(section[:0]); !ok || len(section) == 0 {
				return fmt.Errorf("bad config line %d", start)
			}
			section = append(section, '.')
			continue
		case !isAlpha(c):
			return fmt.Errorf("bad config line %d", p.line)
		}
		name := append([]byte(nil), section...)
		name = append(name, lower(c))
		start := p.line
		value, ok := p.variable(&name)
		if !ok {
			return fmt.Errorf("bad config line %d", start)
		}
		fn(string(name), value)
	}
}

// header reads a section header after its '[' into name.
func (p *parser) header(name []byte) ([]byte, bool) {
	for {
		c := p.next()
		switch {
		case p.eof:
			return name, false
		case c == ']':
			return name, true
		case isSpace(c):
			return p.subsection(name, c)
		case !isKeyChar(c) && c != '.':
			return name, false
		}
		name = append(name, lower(c))
	}
}

// subsection reads the ` "subsection"]` of a header; c is the space
// read after the section's name.
func (p *parser) subsection(name []byte, c byte) ([]byte, bool) {
	for {
		if c == '\n' {
			return name, false
		}
		if c = p.next(); !isSpace(c) {
			break
		}
	}
	if c != '"' {
		return name, false
	}
	name = append(name, '.')
	for {
		c := p.next()
		switch c {
		case '\n':
			return name, false
		case '"':
			return name, p.next() == ']'
		case '\\':
			if c = p.next(); c == '\n' {
				return name, false
			}
		}
		name = append(name, c)
	}
}

// variable reads the rest of a variable's name into name, then its value.
func (p *parser) variable(name *[]byte) (*string, bool) {
	var c byte
	for {
		c = p.next()
		if p.eof || !isKeyChar(c) {
			break
		}
		*name = append(*name, lower(c))
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	if c == '\n' {
		return nil, true
	}
	if c != '=' {
		return nil, false
	}
	v, ok := p.value()
	return &v, ok
}

// value reads a value after its '=', as git's parse_value: unquoted
// whitespace is trimmed at both ends and kept inside, quotes are removed,
// a comment ends the value outside quotes.
func (p *parser) value() (string, bool) {
	var v []byte
	quote, comment := false, false
	trim := 0 // where trailing unquoted whitespace starts; 0: none
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				return "", false
			}
			if trim > 0 {
				v = v[:trim]
			}
			return string(v), true
		}
		if comment {
			continue
		}
		if isSpace(c) && !quote {
			if trim == 0 {
				trim = len(v)
			}
			if len(v) > 0 {
				v = append(v, c)
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		trim = 0
		switch c {
		case '\\':
			switch c = p.next(); c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
		case '"':
			quote = !quote
			continue
		}
		v = append(v, c)
	}
}
