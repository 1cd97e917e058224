package jsonx

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestDepthOK(t *testing.T) {
	t.Parallel()
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"flat", `{"a":[1,2,{"b":3}]}`, true},
		{"at the limit", deep(MaxDepth), true},
		{"one past", deep(MaxDepth + 1), false},
		{"objects past", strings.Repeat(`{"a":`, MaxDepth+1) + "1" + strings.Repeat("}", MaxDepth+1), false},
		{"unclosed past", `{"zz":` + strings.Repeat("[", 3*MaxDepth), false},
		{"brackets in a string", `{"s":"` + strings.Repeat("[", 3*MaxDepth) + `"}`, true},
		{"escaped quote keeps the string open", `{"s":"\"` + strings.Repeat("[", 3*MaxDepth) + `"}`, true},
		{"many shallow", strings.Repeat("[1],", 3*MaxDepth), true},
		{"escaped backslash ends the string", `["\\",` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + "]", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := DepthOK([]byte(tt.in)); got != tt.want {
				t.Errorf("DepthOK = %v, want %v", got, tt.want)
			}
		})
	}
}

// FuzzDepthOK compares depthOK, with bounds small enough for a fuzzer to
// reach, with the nesting encoding/json's tokenizer reports for valid
// documents.
func FuzzDepthOK(f *testing.F) {
	f.Add([]byte(`{"a":[[1]]}`), uint8(2))
	f.Add([]byte(`["[\"[",[[{}]]]`), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, limit uint8) {
		if !json.Valid(b) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		depth, deepest := 0, 0
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			switch tok {
			case json.Delim('['), json.Delim('{'):
				depth++
				deepest = max(deepest, depth)
			case json.Delim(']'), json.Delim('}'):
				depth--
			}
		}
		if got, want := depthOK(b, int(limit)), deepest <= int(limit); got != want {
			t.Fatalf("depthOK(%q, %d) = %v; the document nests %d deep", b, limit, got, deepest)
		}
	})
}

// FuzzDepthOKPrefix checks depthOK on any bytes, valid JSON or not: a
// decoder that stops at its first error never nests deeper than depthOK
// allowed. (Stray closers take depthOK's count below zero, but only past
// such an error.)
func FuzzDepthOKPrefix(f *testing.F) {
	f.Add([]byte(`]][[[`), uint8(2))
	f.Add([]byte(`[]][[[`), uint8(2))
	f.Add([]byte(`["\"]"[[[`), uint8(2))
	f.Fuzz(func(t *testing.T, b []byte, limit uint8) {
		if !depthOK(b, int(limit)) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		depth := 0
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			switch tok {
			case json.Delim('['), json.Delim('{'):
				if depth++; depth > int(limit) {
					t.Fatalf("depthOK(%q, %d) = true; a decoder reaches depth %d", b, limit, depth)
				}
			case json.Delim(']'), json.Delim('}'):
				depth--
			}
		}
	})
}
