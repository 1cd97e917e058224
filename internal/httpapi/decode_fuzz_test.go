package httpapi

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fsplane/fsplane/client"
)

// badSurrogateRef is the plain definition badUTF8's surrogate scan must
// agree with: walk every byte, tracking strings and escapes.
func badSurrogateRef(raw []byte) int {
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\':
			if raw[i+1] != 'u' {
				i++
				continue
			}
			n, _ := strconv.ParseUint(string(raw[i+2:i+6]), 16, 32)
			if r := rune(n); !utf16.IsSurrogate(r) {
				i += 5
				continue
			} else if r < 0xdc00 && i+12 <= len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
				if lo, _ := strconv.ParseUint(string(raw[i+8:i+12]), 16, 32); lo >= 0xdc00 && lo <= 0xdfff {
					i += 11
					continue
				}
			}
			return i
		}
	}
	return -1
}

// FuzzBadUTF8 holds badUTF8's fast surrogate scan to the definition on
// any valid JSON.
func FuzzBadUTF8(f *testing.F) {
	for _, s := range []string{
		`{"content":"a\ud83d\ude00b"}`, `{"content":"\ud800"}`, `{"content":"\\ud800"}`,
		`{"content":"\udc00\ud800"}`, `["\u0041\uD83D\uDE00", "\uDBFF"]`, `{"a":"\\\\\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) || !utf8.Valid(raw) {
			return // invalid UTF-8 is reported before any surrogate
		}
		got, _ := badUTF8(raw)
		if want := badSurrogateRef(raw); got != want {
			t.Fatalf("badUTF8(%q) = %d, want %d", raw, got, want)
		}
	})
}

// FuzzDecodeFields holds decodeFields to json.Unmarshal of the whole body,
// which it replaces: on any JSON object whose keys are exact field names
// (case variants are refused before it runs), both fill a write request
// alike, or both fail.
func FuzzDecodeFields(f *testing.F) {
	for _, s := range []string{
		`{"path":"a.txt","content":"x\ny\u00e9\ud83d\ude00","append":true}`,
		`{"path":"a","content":null,"encoding":"base64","leading_newline":false}`,
		`{"path":5}`, `{"content":"a","content":"b"}`, `{"other":1,"path":"p"}`, `{"encoding":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil || fields == nil || !utf8.Valid(raw) {
			return
		}
		if off, _ := badUTF8(raw); off >= 0 {
			return
		}
		known := jsonFields(reflect.TypeFor[client.WriteRequest]())
		for k := range fields {
			if _, like := known.fold(k); like && !known.names[k] {
				return
			}
		}
		var got, want client.WriteRequest
		gotErr := decodeFields(&got, known, fields)
		wantErr := json.Unmarshal(raw, &want)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("%s: decodeFields error %v, json.Unmarshal %v", raw, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: decodeFields %+v, json.Unmarshal %+v", raw, got, want)
		}
	})
}
