package proto

import (
	"fmt"
	"net/http"
	"net/textproto"
	"strings"
	"time"
)

// Conditional is the part of an HTTP download request whose meaning
// depends on the file: its byte ranges (RFC 9110 §14.2) and its
// preconditions (§13.1). The hub parses the request's headers into it and
// the host decides the answer (Decide) on the file it opened, so that the
// status, the validators and the bytes are all that one file's: a 304
// never vouches for a version other than the one that would have been
// sent, nor a 206 splices parts of two versions. The hub calls Decide too,
// to check the host's outcome, and to reach one itself from the result of
// a host that predates Conditional.
//
// The rules are those of the local download route, net/http's
// ServeContent: If-Match (or, without it, If-Unmodified-Since) failing is
// 412; If-None-Match (or, without it, If-Modified-Since) matching is 304;
// then If-Range decides whether the ranges apply. Two differences, where
// RFC 9110 is followed instead: a range of no bytes (an empty suffix,
// bytes=-0) cannot be satisfied, where ServeContent sends an empty part;
// a range ending before it starts, or with a malformed end, makes the
// header malformed (BadRange) whatever the file, where ServeContent skips
// it when it starts past the end.
type Conditional struct {
	// Ranges are the Range header's byte ranges, in order, without
	// If-Range conditions of their own (IfVersion, IfModTime unset).
	Ranges []RangeRequest `json:",omitempty"`
	// BadRange says the Range header is malformed: once the preconditions
	// and If-Range hold, the answer is 416.
	BadRange bool `json:",omitempty"`
	// IfRangeVersion or IfRangeTime is If-Range: the ranges apply only
	// while the file has this version, or a modification time in this
	// second. An If-Range that can never hold (a weak tag, a malformed
	// value) is sent as no range at all.
	IfRangeVersion string     `json:",omitempty"`
	IfRangeTime    *time.Time `json:",omitempty"`
	// IfMatch and IfNoneMatch are those headers (nil: absent). A header
	// present without a valid tag is an empty list, which If-Match never
	// satisfies.
	IfMatch     *TagList `json:",omitempty"`
	IfNoneMatch *TagList `json:",omitempty"`
	// IfUnmodifiedSince and IfModifiedSince are those headers' dates; an
	// unparsable date is absent, as HTTP ignores it.
	IfUnmodifiedSince *time.Time `json:",omitempty"`
	IfModifiedSince   *time.Time `json:",omitempty"`
}

// TagList is an If-Match or If-None-Match header: Any for "*", and the
// entity tags listed before it, as written ("v" or W/"v"). As net/http
// reads these headers, a list ends at "*" or at its first malformed
// element.
type TagList struct {
	Any  bool     `json:",omitempty"`
	Tags []string `json:",omitempty"`
}

// ParseTagList reads an If-Match or If-None-Match header's value; nil for
// an empty one (no header).
func ParseTagList(v string) *TagList {
	if v == "" {
		return nil
	}
	l := &TagList{}
	for {
		v = textproto.TrimString(v)
		switch {
		case v == "":
			return l
		case v[0] == ',':
			v = v[1:]
			continue
		case v[0] == '*':
			l.Any = true
			return l
		}
		tag, rest := scanETag(v)
		if tag == "" {
			return l
		}
		l.Tags = append(l.Tags, tag)
		v = rest
	}
}

// scanETag splits a leading entity tag ("v" or W/"v", RFC 9110 §8.8.3)
// off s; "" when s does not start with one.
func scanETag(s string) (tag, rest string) {
	s = textproto.TrimString(s)
	start := 0
	if strings.HasPrefix(s, "W/") {
		start = 2
	}
	if len(s[start:]) < 2 || s[start] != '"' {
		return "", ""
	}
	for i := start + 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == 0x21 || c >= 0x23 && c <= 0x7E || c >= 0x80:
		case c == '"':
			return s[:i+1], s[i+1:]
		default:
			return "", ""
		}
	}
	return "", ""
}

// match reports whether l names etag (the file's, "" when it has none):
// "*" names any file; weak compares tags without their W/ prefix, as
// If-None-Match does, and strong only strong tags, as If-Match does.
func (l *TagList) match(etag string, weak bool) bool {
	if l.Any {
		return true
	}
	for _, t := range l.Tags {
		if weak {
			t = strings.TrimPrefix(t, "W/")
		}
		if etag != "" && t == etag {
			return true
		}
	}
	return false
}

// Outcome is a download's answer: its HTTP status (200, 206, 304, 412 or
// 416) and, for 206, the parts sent, in order. One part is a single-part
// answer (Content-Range), several a multipart/byteranges one. For 200 the
// whole file is sent; otherwise nothing.
type Outcome struct {
	Status int
	Parts  []ByteRange `json:",omitempty"`
}

// Check reports what no file could make sense of: a malformed range, a
// range with its own If-Range condition, a malformed Range header that
// also lists ranges, an If-Range without ranges, a malformed entity tag.
func (c *Conditional) Check() error {
	for i := range c.Ranges {
		r := &c.Ranges[i]
		if err := r.Check(); err != nil {
			return err
		}
		if r.IfVersion != "" || r.IfModTime != nil {
			return fmt.Errorf("a range of Conditional.Ranges cannot have an If-Range condition of its own")
		}
	}
	switch {
	case c.BadRange && len(c.Ranges) > 0:
		return fmt.Errorf("a malformed Range (BadRange) cannot list ranges")
	case (c.IfRangeVersion != "" || c.IfRangeTime != nil) && len(c.Ranges) == 0 && !c.BadRange:
		return fmt.Errorf("an If-Range needs a Range")
	}
	for _, l := range []*TagList{c.IfMatch, c.IfNoneMatch} {
		if l == nil {
			continue
		}
		for _, t := range l.Tags {
			if tag, rest := scanETag(t); tag != t || rest != "" {
				return fmt.Errorf("%q is not an entity tag", t)
			}
		}
	}
	return nil
}

// Decide is the answer to c for a file of this size, version ("" when it
// has none: no ETag) and modification time. A nil c is a plain download:
// 200.
func (c *Conditional) Decide(size int64, version string, modTime time.Time) Outcome {
	if c == nil {
		return Outcome{Status: http.StatusOK}
	}
	etag := ""
	if version != "" {
		etag = `"` + version + `"`
	}
	// Last-Modified has whole seconds, so the dates compare to the second.
	notAfter := func(t *time.Time) bool { return !modTime.Truncate(time.Second).After(*t) }
	switch {
	case c.IfMatch != nil:
		if !c.IfMatch.match(etag, false) {
			return Outcome{Status: http.StatusPreconditionFailed}
		}
	case c.IfUnmodifiedSince != nil && knownTime(modTime):
		if !notAfter(c.IfUnmodifiedSince) {
			return Outcome{Status: http.StatusPreconditionFailed}
		}
	}
	switch {
	case c.IfNoneMatch != nil:
		if c.IfNoneMatch.match(etag, true) {
			return Outcome{Status: http.StatusNotModified}
		}
	case c.IfModifiedSince != nil && knownTime(modTime):
		if notAfter(c.IfModifiedSince) {
			return Outcome{Status: http.StatusNotModified}
		}
	}
	ifRange := RangeRequest{IfVersion: c.IfRangeVersion, IfModTime: c.IfRangeTime}
	switch {
	case len(c.Ranges) == 0 && !c.BadRange, !ifRange.holds(version, modTime):
		return Outcome{Status: http.StatusOK}
	case c.BadRange:
		return Outcome{Status: http.StatusRequestedRangeNotSatisfiable}
	case size <= 0:
		return Outcome{Status: http.StatusOK} // as RangeRequest.Part: an empty file is sent whole
	}
	var parts []ByteRange
	var sum int64
	for _, r := range c.Ranges {
		if p, _ := r.Part(size, version, modTime); p.Length > 0 {
			parts = append(parts, p)
			sum += p.Length
		}
	}
	switch {
	case len(parts) == 0:
		return Outcome{Status: http.StatusRequestedRangeNotSatisfiable}
	case sum > size:
		// More bytes than the file: net/http takes it for an attack, or a
		// confused client, and sends the file once.
		return Outcome{Status: http.StatusOK}
	}
	return Outcome{Status: http.StatusPartialContent, Parts: parts}
}

// knownTime reports whether t is a modification time to compare dates
// with: net/http takes the zero time and the Unix epoch for unknown.
func knownTime(t time.Time) bool { return !t.IsZero() && !t.Equal(time.Unix(0, 0)) }
