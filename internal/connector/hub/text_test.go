package hub

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fsplane/fsplane/internal/ops"
	sj "github.com/segmentio/encoding/json"
)

func TestReadResultDecodesContent(t *testing.T) {
	t.Parallel()
	var r readResult
	if err := json.Unmarshal([]byte(`{"Path":"/a","Content":"x\ny\n","TotalLines":2}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Content != "x\ny\n" || r.Path != "/a" || r.TotalLines != 2 || r.ReadResult.Content != "" {
		t.Fatalf("decoded %+v", r)
	}
}

// BenchmarkDecodeReadResult decodes a 4 KiB read result as the hub does
// (sj: segmentio/encoding, the connector's decoder) into ops.ReadResult
// directly and into readResult, and with readResult's own decoder.
func BenchmarkDecodeReadResult(b *testing.B) {
	// Encoded as the host does (no HTML escaping).
	raw, _ := sj.Append(nil, ops.ReadResult{Path: "/a.go", Content: strings.Repeat("\tif err != nil { return \"<x>\" }\n", 128), TotalLines: 128}, sj.SortMapKeys)
	b.Run("ops.ReadResult", func(b *testing.B) {
		for b.Loop() {
			var r ops.ReadResult
			if err := sj.Unmarshal(raw, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("readResult", func(b *testing.B) {
		for b.Loop() {
			var r readResult
			if err := sj.Unmarshal(raw, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decodeFast", func(b *testing.B) {
		for b.Loop() {
			var r readResult
			if !r.decodeFast(raw) {
				b.Fatal("refused")
			}
		}
	})
}

// checkDecodeFast asserts that what readResult.decodeFast accepts, the
// general decoder decodes the same, and that it accepts what hosts write.
func checkDecodeFast(t testing.TB, raw []byte, mustAccept bool) {
	var fast readResult
	ok := fast.decodeFast(raw)
	if !ok {
		if mustAccept {
			t.Fatalf("decodeFast refused %.200s", raw)
		}
		if fast != (readResult{}) {
			t.Fatalf("decodeFast refused %q but left %+v", raw, fast)
		}
		return
	}
	var slow readResult
	if err := sj.Unmarshal(raw, &slow); err != nil {
		t.Fatalf("decodeFast accepted %q, the general decoder refuses it: %v", raw, err)
	}
	if fast != slow {
		t.Fatalf("%q: decodeFast %+v, general decoder %+v", raw, fast, slow)
	}
	checkQuoted(t, raw, slow)
}

// checkQuoted asserts that the quoted decoder, on what the plain one
// accepted, either refuses (invalid UTF-8 in the text) leaving itself
// zero, or agrees with it, its literal decoding to the same text.
func checkQuoted(t testing.TB, raw []byte, want readResult) {
	var q quotedReadResult
	if !q.decodeFast(raw) {
		if q.readResult != (readResult{}) || q.quoted != nil {
			t.Fatalf("quoted decodeFast refused %q but left %+v, %q", raw, q.readResult, q.quoted)
		}
		return
	}
	text := want.Content
	want.Content = ""
	if q.readResult != want {
		t.Fatalf("%q: quoted decodeFast %+v, general decoder %+v", raw, q.readResult, want)
	}
	var got string
	if q.quoted != nil {
		if err := json.Unmarshal(q.quoted, &got); err != nil {
			t.Fatalf("%q: quoted literal %q: %v", raw, q.quoted, err)
		}
	}
	if got != string(text) {
		t.Fatalf("%q: quoted literal decodes to %q, want %q", raw, got, text)
	}
}

func TestReadResultDecodeFast(t *testing.T) {
	t.Parallel()
	for _, r := range []ops.ReadResult{
		{},
		{Path: "/a.go", Content: strings.Repeat("\tif err != nil { return \"<x>\" }\r\n", 128), Version: "v", TotalLines: 128, LineFrom: 1, LineTo: 128, Size: 4096, BOM: true, EOL: "CRLF"},
		{Path: "/é", Content: "bad \xff \u2028 \x00", TotalLines: -3},
	} {
		raw, err := sj.Append(nil, r, sj.SortMapKeys)
		if err != nil {
			t.Fatal(err)
		}
		checkDecodeFast(t, raw, true)
	}
	for _, raw := range []string{
		`{"Content":"a","Extra":1}`, `{"content":"a"}`, `{"Path":null}`, `{"TotalLines":1.5}`,
		`{"TotalLines":99999999999999999999}`, `{"BOM":"yes"}`, `{"Content":"a"`, `[]`,
		"{\"Path\":\"a\",\"Content\":\"\x01\"}", // a raw control character, not at the start
	} {
		checkDecodeFast(t, []byte(raw), false)
		var q quotedReadResult
		if q.decodeFast([]byte(raw)) {
			t.Errorf("quoted decodeFast accepted %q", raw)
		}
	}
}

func FuzzReadResultDecodeFast(f *testing.F) {
	f.Add([]byte(`{"Path":"/a","Content":"x\ny\u00e9\n","Version":"v","TotalLines":2,"LineFrom":1,"LineTo":2,"Size":4,"BOM":false,"EOL":"LF"}`))
	f.Add([]byte(`{"Content":"\ud83d","Size":-0}`))
	f.Fuzz(func(t *testing.T, raw []byte) { checkDecodeFast(t, raw, false) })
}

func TestQuotedReadResult(t *testing.T) {
	t.Parallel()
	content := strings.Repeat("\tx := \"<y>\"\n", 50) + "é \u2028"
	raw, err := sj.Append(nil, ops.ReadResult{Path: "/a.go", Content: content, Version: "v", TotalLines: 51}, sj.SortMapKeys)
	if err != nil {
		t.Fatal(err)
	}
	var q quotedReadResult
	if !q.decodeFast(raw) {
		t.Fatalf("decodeFast refused %.100s", raw)
	}
	var got string
	if err := json.Unmarshal(q.quoted, &got); err != nil || got != content {
		t.Fatalf("quoted text %.60q decodes to %.60q, %v; want %.60q", q.quoted, got, err, content)
	}
	if q.Path != "/a.go" || q.TotalLines != 51 || q.Content != "" {
		t.Fatalf("decoded %+v", q.readResult)
	}
	// Invalid UTF-8 in the literal is not passed on: the general decoder
	// replaces it, as for any other read.
	var bad quotedReadResult
	if bad.decodeFast([]byte("{\"Content\":\"a\xffb\"}")) || bad.quoted != nil {
		t.Fatalf("decodeFast kept a literal holding invalid UTF-8: %q", bad.quoted)
	}
}

// TestReadResultNullContent: a null text field decodes as encoding/json
// decodes null into a string (it is left as it was), with either decoder
// the connector uses, instead of failing the whole result.
func TestReadResultNullContent(t *testing.T) {
	t.Parallel()
	raw := []byte(`{"Path":"/a","Content":null,"TotalLines":0}`)
	for name, unmarshal := range map[string]func([]byte, any) error{"encoding/json": json.Unmarshal, "segmentio": sj.Unmarshal} {
		var r readResult
		if err := unmarshal(raw, &r); err != nil {
			t.Errorf("%s: %v, want a result with no content", name, err)
			continue
		}
		if r.Content != "" || r.Path != "/a" {
			t.Errorf("%s: decoded %+v", name, r)
		}
	}
}
