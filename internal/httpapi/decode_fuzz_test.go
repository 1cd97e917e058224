package httpapi

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/fsplane/fsplane/client"
	"github.com/fsplane/fsplane/internal/jsonx"
)

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
		if off, _ := jsonx.InvalidText(raw); off >= 0 {
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
