package httpapi

import (
	"errors"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/fserr"
)

// hostConditional reads a download request's ranges and preconditions as
// http.ServeContent does, so that the local and host routes agree on what
// they mean (the local route applies proto.Conditional's few departures
// from ServeContent through localRanges). A Range in a unit other than
// bytes is no Range at all: RFC 9110 §14.2 says a server MUST ignore it,
// where ServeContent answers 416. cond is all of them, for a host that decides on the file it
// opens (nil for a plain download); legacy is the one range, with its
// If-Range, that a host from before Conditional understands (nil unless
// the request has exactly one valid range).
func hostConditional(h http.Header) (cond *proto.Conditional, legacy *proto.RangeRequest) {
	c := &proto.Conditional{
		IfMatch:           proto.ParseTagList(h.Get("If-Match")),
		IfNoneMatch:       proto.ParseTagList(h.Get("If-None-Match")),
		IfUnmodifiedSince: httpDate(h.Get("If-Unmodified-Since")),
		IfModifiedSince:   httpDate(h.Get("If-Modified-Since")),
	}
	// An If-Range that can never hold makes the Range as good as absent.
	if v := h.Get("Range"); v != "" && ifRange(h.Get("If-Range"), c) {
		var err error
		if c.Ranges, err = parseRanges(v); err != nil {
			c.Ranges, c.BadRange = nil, err != errOtherUnit
		}
		if len(c.Ranges) == 1 {
			one := c.Ranges[0]
			one.IfVersion, one.IfModTime = c.IfRangeVersion, c.IfRangeTime
			legacy = &one
		}
		if len(c.Ranges) == 0 && !c.BadRange {
			c.IfRangeVersion, c.IfRangeTime = "", nil // bytes= with no range: no Range
		}
	}
	if c.IfMatch == nil && c.IfNoneMatch == nil && c.IfUnmodifiedSince == nil && c.IfModifiedSince == nil &&
		len(c.Ranges) == 0 && !c.BadRange {
		return nil, nil
	}
	return c, legacy
}

// httpDate is an HTTP date header's time; nil when absent or unparsable,
// which net/http takes for no header.
func httpDate(v string) *time.Time {
	if v == "" {
		return nil
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return nil
	}
	return &t
}

// errBadRange is a Range header the local route's http.ServeContent
// would refuse with 416 whatever the file.
var errBadRange = errors.New("invalid range")

// errOtherUnit is a Range header in a unit other than bytes, which is
// ignored.
var errOtherUnit = errors.New("not a byte range")

// parseRanges parses a Range header's byte ranges, in order. The unit is
// case-insensitive (RFC 9110 §14.1).
func parseRanges(v string) ([]proto.RangeRequest, error) {
	unit, specs, ok := strings.Cut(v, "=")
	switch {
	case !ok:
		return nil, errBadRange
	case !strings.EqualFold(textproto.TrimString(unit), "bytes"):
		return nil, errOtherUnit
	}
	var out []proto.RangeRequest
	for spec := range strings.SplitSeq(specs, ",") {
		spec = textproto.TrimString(spec)
		if spec == "" {
			continue
		}
		r, err := parseRangeSpec(spec)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// parseRangeSpec parses one byte range: first-last, first- or -suffix.
func parseRangeSpec(spec string) (proto.RangeRequest, error) {
	first, last, ok := strings.Cut(spec, "-")
	if !ok {
		return proto.RangeRequest{}, errBadRange
	}
	first, last = textproto.TrimString(first), textproto.TrimString(last)
	if first == "" {
		if last == "" || last[0] == '-' {
			return proto.RangeRequest{}, errBadRange
		}
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return proto.RangeRequest{}, errBadRange
		}
		return proto.RangeRequest{Last: &n}, nil
	}
	a, err := strconv.ParseInt(first, 10, 64)
	if err != nil || a < 0 {
		return proto.RangeRequest{}, errBadRange
	}
	rng := proto.RangeRequest{First: &a}
	if last != "" {
		b, err := strconv.ParseInt(last, 10, 64)
		if err != nil || b < a {
			return proto.RangeRequest{}, errBadRange
		}
		rng.Last = &b
	}
	return rng, nil
}

// ifRange copies an If-Range header into c; false when the header can
// never hold, so the Range is to be ignored. As http.ServeContent: a
// strong ETag must equal the version, a weak one never matches, and a date
// must be the file's modification time to the second.
func ifRange(v string, c *proto.Conditional) bool {
	v = textproto.TrimString(v)
	switch {
	case v == "":
		return true
	case strings.HasPrefix(v, "W/"):
		return false
	case strings.HasPrefix(v, `"`):
		tag, _, closed := strings.Cut(v[1:], `"`)
		if !closed || tag == "" {
			return false
		}
		c.IfRangeVersion = tag
		return true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return false
	}
	c.IfRangeTime = &t
	return true
}

// hostAnswer is the answer to a host download, for a result that
// describes the file the host opened and sends from.
//
// A host that knows Conditional decided the outcome itself (res.Status);
// it is checked against the one cond decides on res's size, version and
// time, so that a status or Content-Range never names other bytes than
// those sent. A host from before it (no Status) decided only the legacy
// range: the hub decides the rest on res, which is as safe, as res
// describes the file whose bytes follow. A 304, 412 or 416 is then
// answered without the bytes; otherwise the client gets what the host
// sends, the legacy range's part or the whole file (a 200 for several
// ranges, which HTTP allows for any Range).
func hostAnswer(path string, cond *proto.Conditional, legacy *proto.RangeRequest, res *proto.DownloadResult) (proto.Outcome, error) {
	want := cond.Decide(res.Size, res.Version, res.ModTime)
	if res.Status != 0 {
		if res.Status != want.Status || !slices.Equal(res.Parts, want.Parts) || res.Range != nil {
			return proto.Outcome{}, fserr.New(fserr.IOError, "download", path, "the host's answer to the Range and If-… headers for %s is not the one they call for (it answered %d with %d parts, not %d with %d): its fsplane may be of another version", path, res.Status, len(res.Parts), want.Status, len(want.Parts)).
				WithHint("download without Range and If-… headers, or run the same fsplane version on the host and the hub")
		}
		return want, nil
	}
	switch want.Status {
	case http.StatusNotModified, http.StatusPreconditionFailed, http.StatusRequestedRangeNotSatisfiable:
		return want, nil
	}
	part, err := servedPart(path, legacy, res)
	switch {
	case err != nil:
		return proto.Outcome{}, err
	case part == nil:
		return proto.Outcome{Status: http.StatusOK}, nil
	case part.Length == 0:
		return proto.Outcome{Status: http.StatusRequestedRangeNotSatisfiable}, nil
	}
	return proto.Outcome{Status: http.StatusPartialContent, Parts: []proto.ByteRange{*part}}, nil
}

// servedPart is the part of the file res says a host from before
// Conditional sends for rng: nil for the whole file. A host that honours
// ranges sends exactly the part rng resolves to against the file it opened
// (proto.RangeRequest.Part); one that does not (it predates ranges) sends
// the whole file and says nothing. Anything else would put other bytes
// under the Content-Range the client trusts, and is refused.
func servedPart(path string, rng *proto.RangeRequest, res *proto.DownloadResult) (*proto.ByteRange, error) {
	if res.Range == nil {
		return nil, nil
	}
	if rng != nil {
		if want, ok := rng.Part(res.Size, res.Version, res.ModTime); ok && want == *res.Range {
			return res.Range, nil
		}
	}
	return nil, fserr.New(fserr.IOError, "download", path, "the host sent %d bytes from byte %d of %s, not the range asked", res.Range.Length, res.Range.Offset, path).
		WithHint("download the whole file, or update fsplane on the host")
}

// localRanges is the local download route's transfer.Source.RangeRule: it
// rewrites the request's Range so that http.ServeContent answers what
// proto.Conditional decides for the file — as the host route answers —
// where ServeContent would differ: a Range in another unit is dropped
// (200), an empty file is sent whole, a range of no bytes (bytes=-0) is
// left out and a set of nothing but such ranges refused (416, bytes */N;
// ServeContent sent 206 with "bytes 100-99/100", or "0--1/0" for an empty
// file), a range ending before it starts is malformed (416). The ranges
// that stand are written as their absolute bytes, which ServeContent
// serves as they are; preconditions and If-Range stay for it to apply, as
// Decide applied them.
func localRanges(h http.Header, size int64, version string, modTime time.Time) {
	cond, _ := hostConditional(h)
	out := cond.Decide(size, version, modTime)
	switch out.Status {
	case http.StatusOK:
		h.Del("Range")
	case http.StatusPartialContent:
		var b strings.Builder
		b.WriteString("bytes=")
		for i, p := range out.Parts {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(p.Offset, 10) + "-" + strconv.FormatInt(p.Offset+p.Length-1, 10))
		}
		h.Set("Range", b.String())
	case http.StatusRequestedRangeNotSatisfiable:
		if cond.BadRange {
			h.Set("Range", "bytes=-") // malformed to ServeContent too: 416 with no Content-Range
		} else {
			h.Set("Range", "bytes="+strconv.FormatInt(size, 10)+"-") // past the end: 416 with bytes */size
		}
	}
}
