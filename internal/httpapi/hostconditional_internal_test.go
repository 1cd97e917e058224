package httpapi

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	json "github.com/segmentio/encoding/json"

	"github.com/fsplane/fsplane/internal/connector/proto"
)

// serveContentOutcome is what http.ServeContent answers r with for
// content — after localRanges when local, as transfer.Source.Serve runs
// them on the local download route: its status and the parts of a 206.
func serveContentOutcome(t *testing.T, r *http.Request, content []byte, version string, mod time.Time, local bool) proto.Outcome {
	t.Helper()
	w := httptest.NewRecorder()
	w.Header().Set("Content-Type", "application/octet-stream")
	if version != "" {
		w.Header().Set("ETag", `"`+version+`"`)
	}
	r = r.Clone(r.Context())
	if local && r.Header.Get("Range") != "" {
		localRanges(r.Header, int64(len(content)), version, mod)
	}
	http.ServeContent(w, r, "f", mod, bytes.NewReader(content))
	out := proto.Outcome{Status: w.Code}
	if w.Code != http.StatusPartialContent {
		return out
	}
	part := func(cr string) proto.ByteRange {
		var first, last, size int64
		if _, err := fmt.Sscanf(cr, "bytes %d-%d/%d", &first, &last, &size); err != nil {
			t.Fatalf("Content-Range %q: %v", cr, err)
		}
		return proto.ByteRange{Offset: first, Length: last - first + 1}
	}
	mt, params, _ := mime.ParseMediaType(w.Header().Get("Content-Type"))
	if mt != "multipart/byteranges" {
		return proto.Outcome{Status: w.Code, Parts: []proto.ByteRange{part(w.Header().Get("Content-Range"))}}
	}
	mr := multipart.NewReader(w.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out.Parts = append(out.Parts, part(p.Header.Get("Content-Range")))
	}
}

// TestHostConditionalAsServeContent: for every combination of ranges,
// If-Range and preconditions below, on files with and without a version
// and a known time, what the hub parses from the headers, carried as the
// host receives it and decided on the file, is what the local route
// answers (http.ServeContent after localRanges): the same status, and the
// same parts in the same order. It is also what http.ServeContent answers
// on its own, but for proto.Conditional's departures, where RFC 9110 is
// followed instead: a range of no bytes (bytes=-0), which ServeContent
// answers with an empty part and a Content-Range ending before it starts;
// an empty file, which gets bytes 0--1/0; a range ending before it
// starts, which ServeContent skips when it starts past the end; and a unit
// other than "bytes" (or "bytes" in capitals), which ServeContent refuses
// and RFC 9110 says to ignore (or read as bytes).
func TestHostConditionalAsServeContent(t *testing.T) {
	t.Parallel()
	content := []byte("0123456789abcdefghij")
	mod := time.Date(2024, 5, 1, 12, 0, 0, 500, time.UTC)
	date := func(d time.Duration) string { return mod.Add(d).UTC().Format(http.TimeFormat) }
	files := []struct {
		name    string
		content []byte
		version string
		mod     time.Time
	}{
		{"versioned", content, "v1", mod},
		{"no version", content, "", mod},
		{"epoch time", content, "v1", time.Unix(0, 0)},
		{"empty", nil, "v0", mod},
	}
	ranges := []string{"", "bytes=0-3", "bytes=5-", "bytes=-4", "bytes=18-40", "bytes=20-", "bytes=0-1,4-5",
		"bytes=6-7,0-1", "bytes=0-5,3-8", "bytes=0-,-3", "bytes=0-1,50-60", "bytes=50-,60-", "bytes= 1-2 , ,9-9",
		"bytes=3-1", "lines=0-3", "bytes=0-1,x", "bytes=", "bytes=-4,0-2", "bytes=-0", "bytes=-0,2-3", "Bytes=0-3", "nonsense"}
	ifRanges := []string{"", `"v1"`, `"v0"`, `W/"v1"`, date(0), date(-time.Hour), "garbage"}
	preconditions := []map[string]string{
		{},
		{"If-Match": `"v1"`}, {"If-Match": `"v0"`}, {"If-Match": `W/"v1"`}, {"If-Match": "*"},
		{"If-Match": `"v0", "v1"`}, {"If-Match": `garbage, "v1"`}, {"If-Match": `"v0", *`},
		{"If-None-Match": `"v1"`}, {"If-None-Match": `W/"v1"`}, {"If-None-Match": `"v0"`}, {"If-None-Match": "*"},
		{"If-None-Match": `"v0", W/"v1"`}, {"If-None-Match": `"v0" garbage "v1"`},
		{"If-Modified-Since": date(0)}, {"If-Modified-Since": date(-time.Hour)}, {"If-Modified-Since": "garbage"},
		{"If-Unmodified-Since": date(0)}, {"If-Unmodified-Since": date(-time.Hour)}, {"If-Unmodified-Since": "garbage"},
		{"If-Match": `"v1"`, "If-Unmodified-Since": date(-time.Hour)},
		{"If-Match": `"v0"`, "If-None-Match": `"v1"`},
		{"If-None-Match": `"v0"`, "If-Modified-Since": date(time.Hour)},
		{"If-Unmodified-Since": date(-time.Hour), "If-None-Match": `"v1"`},
	}
	for _, f := range files {
		for _, rng := range ranges {
			for _, ir := range ifRanges {
				for _, pre := range preconditions {
					r := httptest.NewRequest(http.MethodGet, "/", nil)
					if rng != "" {
						r.Header.Set("Range", rng)
					}
					if ir != "" {
						r.Header.Set("If-Range", ir)
					}
					for k, v := range pre {
						r.Header.Set(k, v)
					}
					name := fmt.Sprintf("%s file, Range %q, If-Range %q, %v", f.name, rng, ir, pre)
					want := serveContentOutcome(t, r, f.content, f.version, f.mod, true)
					raw := serveContentOutcome(t, r, f.content, f.version, f.mod, false)
					departs := (raw.Status == http.StatusPartialContent && len(f.content) == 0) ||
						(rng == "bytes=3-1" && len(f.content) <= 3) ||
						strings.Contains(rng, "-0") || rng == "lines=0-3" || rng == "Bytes=0-3"
					cond, _ := hostConditional(r.Header)
					if cond != nil {
						if err := cond.Check(); err != nil {
							t.Errorf("%s: the host would refuse %+v: %v", name, cond, err)
							continue
						}
						// As the host receives it.
						b, err := json.Marshal(cond)
						if err != nil {
							t.Fatal(err)
						}
						cond = &proto.Conditional{}
						if err := json.Unmarshal(b, cond); err != nil {
							t.Fatal(err)
						}
					}
					got := cond.Decide(int64(len(f.content)), f.version, f.mod)
					if !departs && (got.Status != raw.Status || !slices.Equal(got.Parts, raw.Parts)) {
						t.Errorf("%s: host route %+v, http.ServeContent %+v", name, got, raw)
					}
					if got.Status != want.Status || !slices.Equal(got.Parts, want.Parts) {
						t.Errorf("%s: host route %+v, local route (ServeContent after localRanges) %+v", name, got, want)
					}
				}
			}
		}
	}
	// The departures, as RFC 9110 has them.
	for _, tc := range []struct {
		rng     string
		content []byte
		want    proto.Outcome
	}{
		{"bytes=-0", content, proto.Outcome{Status: http.StatusRequestedRangeNotSatisfiable}},
		{"bytes=-0,2-3", content, proto.Outcome{Status: http.StatusPartialContent, Parts: []proto.ByteRange{{Offset: 2, Length: 2}}}},
		{"bytes=-5", nil, proto.Outcome{Status: http.StatusOK}},
		{"lines=0-3", content, proto.Outcome{Status: http.StatusOK}},
		{"Bytes=0-3", content, proto.Outcome{Status: http.StatusPartialContent, Parts: []proto.ByteRange{{Offset: 0, Length: 4}}}},
		{"bytes=3-1", []byte("ab"), proto.Outcome{Status: http.StatusRequestedRangeNotSatisfiable}},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Range", tc.rng)
		if got := serveContentOutcome(t, r, tc.content, "v1", mod, true); got.Status != tc.want.Status || !slices.Equal(got.Parts, tc.want.Parts) {
			t.Errorf("Range %q on %d bytes: local route %+v, want %+v", tc.rng, len(tc.content), got, tc.want)
		}
	}
}
