package proto

import (
	"encoding/json"
	"testing"
	"time"
)

func at(n int64) *int64 { return &n }

// TestRangePart: a range resolves against the file's size as HTTP's byte
// ranges do; an If-Range condition that fails, or an empty file, gets the
// whole file; a range starting at or past the end gets nothing.
func TestRangePart(t *testing.T) {
	t.Parallel()
	mod := time.Date(2024, 5, 1, 12, 0, 0, 500, time.UTC)
	sameSecond, otherSecond := mod.Truncate(time.Second), mod.Add(-time.Second)
	for _, tc := range []struct {
		name  string
		r     RangeRequest
		size  int64
		want  ByteRange
		whole bool
	}{
		{"first and last", RangeRequest{First: at(0), Last: at(3)}, 10, ByteRange{0, 4}, false},
		{"open end", RangeRequest{First: at(5)}, 10, ByteRange{5, 5}, false},
		{"suffix", RangeRequest{Last: at(4)}, 10, ByteRange{6, 4}, false},
		{"suffix longer than the file", RangeRequest{Last: at(40)}, 10, ByteRange{0, 10}, false},
		{"last past the end", RangeRequest{First: at(8), Last: at(100)}, 10, ByteRange{8, 2}, false},
		{"one byte", RangeRequest{First: at(9), Last: at(9)}, 10, ByteRange{9, 1}, false},
		{"first at the end", RangeRequest{First: at(10)}, 10, ByteRange{}, false},
		{"empty suffix", RangeRequest{Last: at(0)}, 10, ByteRange{10, 0}, false},
		{"empty file", RangeRequest{First: at(0), Last: at(3)}, 0, ByteRange{}, true},
		{"If-Range version holds", RangeRequest{First: at(2), IfVersion: "v1"}, 10, ByteRange{2, 8}, false},
		{"If-Range version fails", RangeRequest{First: at(2), IfVersion: "v0"}, 10, ByteRange{}, true},
		{"If-Range time holds", RangeRequest{First: at(2), IfModTime: &sameSecond}, 10, ByteRange{2, 8}, false},
		{"If-Range time fails", RangeRequest{First: at(2), IfModTime: &otherSecond}, 10, ByteRange{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := tc.r.Check(); err != nil {
				t.Fatalf("Check: %v", err)
			}
			got, ok := tc.r.Part(tc.size, "v1", mod)
			if ok == tc.whole || got != tc.want {
				t.Errorf("Part = %+v, %v; want %+v, %v", got, ok, tc.want, !tc.whole)
			}
		})
	}
}

// TestRangeCheck: ranges malformed whatever the file are refused before
// the host opens anything.
func TestRangeCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		r    RangeRequest
	}{
		{"no ends", RangeRequest{}},
		{"negative first", RangeRequest{First: at(-1)}},
		{"negative suffix", RangeRequest{Last: at(-1)}},
		{"last before first", RangeRequest{First: at(5), Last: at(4)}},
	} {
		if tc.r.Check() == nil {
			t.Errorf("%s: Check accepted %+v", tc.name, tc.r)
		}
	}
}

// TestDownloadRangeIsOptional: a request or result without a range
// encodes as it did before ranges, so hubs and hosts from before them
// read it unchanged, and a bytes=0- range keeps its zero first byte.
func TestDownloadRangeIsOptional(t *testing.T) {
	t.Parallel()
	b, _ := json.Marshal(DownloadRequest{Path: "a"})
	if string(b) != `{"Path":"a"}` {
		t.Errorf("request without a range: %s", b)
	}
	b, _ = json.Marshal(DownloadRequest{Path: "a", Range: &RangeRequest{First: at(0)}})
	if string(b) != `{"Path":"a","Range":{"First":0}}` {
		t.Errorf("request for bytes=0-: %s", b)
	}
	b, _ = json.Marshal(DownloadResult{Size: 1, Version: "v", ModTime: time.Unix(0, 0).UTC()})
	if string(b) != `{"Size":1,"Version":"v","ModTime":"1970-01-01T00:00:00Z"}` {
		t.Errorf("result without a range: %s", b)
	}
}
