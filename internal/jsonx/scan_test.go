package jsonx

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stdString is encoding/json's literal of s with HTML escaping off.
func stdString(t testing.TB, s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func checkAppendString(t testing.TB, s string) {
	got := string(AppendString([]byte("x"), s))
	if want := "x" + stdString(t, s); got != want {
		t.Fatalf("AppendString(%q) = %s, encoding/json writes %s", s, got, want)
	}
}

func TestAppendString(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("0123456789abcde\n", 256)
	for _, s := range []string{
		"", "a", "plain ascii text", "12345678", "1234567\n", "\n1234567",
		"quote \" backslash \\ slash / <tag> & amp", "\b\f\n\r\t\x00\x01\x1f\x7f",
		"é 😀 ü — ☃", "sep \u2028 and \u2029 here", "invalid \xff\xfe bytes", "cut \xe2\x80",
		long, long + "\xc3", strings.Repeat("é", 100) + "\u2028",
	} {
		checkAppendString(t, s)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "line\nline\r\n", "\"q\"\\", "\u2028é\xff", strings.Repeat("ab\x00", 9)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkAppendString(t, s) })
}

// ourValid reports whether b is one JSON value, with space around it, by
// ScanValue.
func ourValid(b []byte) bool {
	end, ok := ScanValue(b, skipSpace(b, 0))
	return ok && skipSpace(b, end) == len(b)
}

func TestScanValue(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	for _, in := range []string{
		`0`, `-0`, `-1.5e+10`, `1E5`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `0x1`,
		`true`, `tru`, `false `, ` null`, `nul`, `nulll`,
		`""`, `"a\"b"`, `"\u00e9\ud83d\ude00"`, `"\u12"`, `"\x"`, "\"raw\nline\"", "\"tab\tin\"", "\"\xff\"", `"open`,
		`[]`, `[1,2]`, `[1,]`, `[,1]`, `[1 2]`, `{}`, `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`,
		`{"a":[{"b":{"c":"d\n"}}],"e":null}`, `[1]]`, `{}}`, ``, ` `, deep, "[" + deep + "]",
		`"` + strings.Repeat("0123456789abcd\\n", 40) + `"`,
	} {
		if got, want := ourValid([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Errorf("ScanValue(%.40q) valid = %v, json.Valid = %v", in, got, want)
		}
	}
}

func FuzzScanValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e3,true,null,"x\ny"]}`, `"\u00e9"`, `[{}]`, `01`, "\"a\x01\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := ourValid(b), json.Valid(b); got != want {
			t.Fatalf("ScanValue(%q) valid = %v, json.Valid = %v", b, got, want)
		}
	})
}

// members decodes b's members with Members and String, the last of a
// repeated key winning, as encoding/json decodes into a map.
func members(b []byte) (map[string]string, bool) {
	out := map[string]string{}
	ok := Members(b, func(key, value []byte) bool {
		k, ok := String(key)
		if ok {
			out[k] = string(value)
		}
		return ok
	})
	return out, ok
}

// stdMembers is members by encoding/json, values compacted.
func stdMembers(b []byte) (map[string]string, bool) {
	var raw map[string]json.RawMessage
	if json.Unmarshal(b, &raw) != nil || raw == nil {
		return nil, false
	}
	out := map[string]string{}
	for k, v := range raw {
		out[k] = string(v)
	}
	return out, true
}

func checkMembers(t testing.TB, b []byte) {
	got, ok := members(b)
	want, wantOK := stdMembers(b)
	if ok != wantOK {
		t.Fatalf("Members(%q) ok = %v, encoding/json ok = %v", b, ok, wantOK)
	}
	if ok {
		// encoding/json keeps a raw value's bytes as they are, like Members.
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Members(%q) (-encoding/json +ours):\n%s", b, diff)
		}
	}
}

func TestMembers(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a" : "x\ny" , "b":[1, {"c":2}] }`, `{"a":1,"a":2}`,
		`{"k\u00e9y":true,"\"":null}`, `{"a":1}x`, `{"a":1`, `[1]`, `"s"`, `{"a"}`, `{"a":}`, "{\"\xff\":1}",
		`null`,
	} {
		checkMembers(t, []byte(in))
	}
}

func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{"type":"result","op_id":"x","ok":true,"result":{"Content":"a\nb"}}`, `{"a":[{}],"b":"\u0041"}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkMembers(t, b) })
}

func FuzzString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"esc\n\"\u00e9"`, "\"bad \xff\"", `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		end, _, ok := ScanString(lit, 0)
		if !ok || end != len(lit) {
			return
		}
		var want string
		if err := json.Unmarshal(lit, &want); err != nil {
			t.Fatalf("ScanString accepted %q, encoding/json refuses it: %v", lit, err)
		}
		if got, ok := String(lit); !ok || got != want {
			t.Fatalf("String(%q) = %q, %v; encoding/json gives %q", lit, got, ok, want)
		}
	})
}

func TestInt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{{"0", 0, true}, {"-12", -12, true}, {"9223372036854775807", 1<<63 - 1, true}, {"9223372036854775808", 0, false}, {"1.0", 0, false}, {"1e3", 0, false}} {
		got, ok := Int([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("Int(%s) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestSpecialAtEveryOffset puts each kind of special byte at every offset
// of the words the eight-bytes-at-a-time loops read, alone and in pairs.
func TestSpecialAtEveryOffset(t *testing.T) {
	t.Parallel()
	specials := []string{`"`, `\`, "\n", "\x01", "\x7f", "é", "\u2028", "\xff", "😀"}
	for n := 0; n <= 20; n++ {
		for p := 0; p <= n; p++ {
			for _, a := range specials {
				for _, b := range specials {
					s := strings.Repeat("x", p) + a + strings.Repeat("y", n-p) + b
					checkAppendString(t, s)
					lit := AppendString(nil, s)
					if end, _, ok := ScanString(lit, 0); !ok || end != len(lit) {
						t.Fatalf("ScanString(%q) = %d, %v", lit, end, ok)
					}
					var want string
					if err := json.Unmarshal(lit, &want); err != nil {
						t.Fatal(err)
					}
					if got, ok := String(lit); !ok || got != want {
						t.Fatalf("String(%q) = %q, want %q", lit, got, want)
					}
				}
			}
		}
	}
}

// FuzzDecodeString checks DecodeString on a literal followed by more
// bytes: it ends where ScanString does and decodes as encoding/json.
func FuzzDecodeString(f *testing.F) {
	f.Add([]byte(`"a\"b\n" , "next"`))
	f.Add([]byte(`"\ud83d\ude00\u00e9 \xff"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, end, ok := DecodeString(b, 0)
		scanEnd, _, scanOK := ScanString(b, 0)
		if ok != scanOK || (ok && end != scanEnd) {
			t.Fatalf("DecodeString(%q) = %d, %v; ScanString = %d, %v", b, end, ok, scanEnd, scanOK)
		}
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(b[:end], &want); err != nil || s != want {
			t.Fatalf("DecodeString(%q) = %q; encoding/json: %q, %v", b, s, want, err)
		}
	})
}

// TestMembersDepth puts the nesting limit inside an object: Members counts
// the object itself, as encoding/json does.
func TestMembersDepth(t *testing.T) {
	t.Parallel()
	for _, n := range []int{maxDepth - 2, maxDepth - 1, maxDepth, maxDepth + 1} {
		deep := bytes.Repeat([]byte("["), n)
		deep = append(deep, bytes.Repeat([]byte("]"), n)...)
		checkMembers(t, []byte(`{"a":`+string(deep)+`}`))
	}
}
