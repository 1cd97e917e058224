package proto

import (
	"encoding/json"
	"testing"
	"time"
)

// TestConditionalCheck: a host refuses Conditional args no file could
// make sense of, before it opens anything, and takes the hub's.
func TestConditionalCheck(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tc := range []struct {
		name string
		c    Conditional
		ok   bool
	}{
		{"ranges and preconditions", Conditional{Ranges: []RangeRequest{{First: at(0), Last: at(1)}, {Last: at(3)}}, IfRangeVersion: "v",
			IfMatch: &TagList{Tags: []string{`"v"`, `W/"w"`}}, IfNoneMatch: &TagList{Any: true}, IfModifiedSince: &now}, true},
		{"a malformed Range with If-Range", Conditional{BadRange: true, IfRangeTime: &now}, true},
		{"an empty tag list", Conditional{IfMatch: &TagList{}}, true},
		{"a malformed range", Conditional{Ranges: []RangeRequest{{First: at(3), Last: at(1)}}}, false},
		{"a range with its own If-Range", Conditional{Ranges: []RangeRequest{{First: at(0), IfVersion: "v"}}}, false},
		{"a malformed Range with ranges", Conditional{BadRange: true, Ranges: []RangeRequest{{First: at(0)}}}, false},
		{"If-Range without a Range", Conditional{IfRangeVersion: "v"}, false},
		{"an unquoted tag", Conditional{IfNoneMatch: &TagList{Tags: []string{"v"}}}, false},
		{"a tag with more after it", Conditional{IfMatch: &TagList{Tags: []string{`"v", "w"`}}}, false},
	} {
		if err := tc.c.Check(); (err == nil) != tc.ok {
			t.Errorf("%s: Check = %v, want ok %v", tc.name, err, tc.ok)
		}
		req := DownloadRequest{Path: "a", Conditional: &tc.c}
		if err := req.Check(); (err == nil) != tc.ok {
			t.Errorf("%s: DownloadRequest.Check = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// TestConditionalIsOptional: Conditional and the outcome are new optional
// fields: absent, a request and a result encode as before them.
func TestConditionalIsOptional(t *testing.T) {
	t.Parallel()
	b, _ := json.Marshal(DownloadResult{Size: 1, Version: "v", ModTime: time.Unix(0, 0).UTC(), Range: &ByteRange{0, 1}})
	if string(b) != `{"Size":1,"Version":"v","ModTime":"1970-01-01T00:00:00Z","Range":{"Offset":0,"Length":1}}` {
		t.Errorf("result without an outcome: %s", b)
	}
	b, _ = json.Marshal(DownloadRequest{Path: "a", Conditional: &Conditional{IfMatch: &TagList{}}})
	if string(b) != `{"Path":"a","Conditional":{"IfMatch":{}}}` {
		t.Errorf("If-Match with no valid tag: %s", b)
	}
}
