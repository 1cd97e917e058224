package jsonx

import (
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

func FuzzDepthOK(f *testing.F) {
	f.Add([]byte(`{"a":[[1]]}`))
	f.Add([]byte(`"[\"[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		// Whatever DepthOK says of a valid document, ScanValue, which
		// bounds its own recursion at the same depth, agrees.
		end, ok := ScanValue(b, skipSpace(b, 0))
		if ok && skipSpace(b, end) == len(b) && !DepthOK(b) {
			t.Fatalf("ScanValue took %q, DepthOK refused it", b)
		}
	})
}
