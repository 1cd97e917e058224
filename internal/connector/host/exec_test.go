package host

import (
	"strings"
	"testing"

	json "github.com/segmentio/encoding/json"

	"github.com/fsplane/fsplane/internal/ops"
)

// checkReadResult asserts appendReadResult writes what json.Append, the
// encoder of every other result, writes. A field added to ops.ReadResult
// and not to appendReadResult fails here (json.Append writes it).
func checkReadResult(t testing.TB, r ops.ReadResult) {
	want, err := json.Append(nil, &r, json.SortMapKeys)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendReadResult(nil, &r); string(got) != string(want) {
		t.Fatalf("appendReadResult:\n%s\njson.Append:\n%s", got, want)
	}
}

func TestAppendReadResult(t *testing.T) {
	t.Parallel()
	for _, r := range []ops.ReadResult{
		{},
		{Path: "/p/a.go", Content: strings.Repeat("\tif x != \"<y>\" && z {\r\n", 100), Version: "sha256:ab", TotalLines: 100, LineFrom: 1, LineTo: 100, Size: 2400, BOM: true, EOL: "CRLF"},
		{Path: "/p/é \u2028.txt", Content: "ctl \x00\x01\x1f\x7f bad \xff utf8 \u2029", TotalLines: -1, LineFrom: 3, LineTo: 2, Size: 1 << 40, EOL: "CR"},
	} {
		checkReadResult(t, r)
	}
}

func FuzzAppendReadResult(f *testing.F) {
	f.Add("/a", "x\ny\n", "v1", 2, int64(4), true)
	f.Add("", "\"\\\u2028\xff", "", -1, int64(-1), false)
	f.Fuzz(func(t *testing.T, path, content, version string, n int, size int64, bom bool) {
		checkReadResult(t, ops.ReadResult{Path: path, Content: content, Version: version, TotalLines: n, LineFrom: n / 2, LineTo: n + 1, Size: size, BOM: bom, EOL: version})
	})
}
