package client

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEncodeQuery(t *testing.T) {
	t.Parallel()
	quarter, cursor := 0.25, int64(3)
	type floats struct {
		Timeout *float64  `json:"timeout,omitempty"`
		Ratio   float32   `json:"ratio"`
		Steps   []float64 `json:"step,omitempty"`
		Zero    float64   `json:"zero,omitempty"`
	}
	type scalars struct {
		S string   `json:"s"`
		B *bool    `json:"b,omitempty"`
		I int8     `json:"i"`
		U uint16   `json:"u"`
		L []string `json:"l"`
	}
	yes := true
	for _, tt := range []struct {
		name    string
		q       any
		want    url.Values
		wantErr string
	}{
		{"poll query", PollQuery{Cursor: &cursor, Limit: Int(10), Timeout: &quarter},
			url.Values{"cursor": {"3"}, "limit": {"10"}, "timeout": {"0.25"}}, ""},
		{"floats", floats{Timeout: &quarter, Ratio: 1.5, Steps: []float64{0.1, 2, 1e21}},
			url.Values{"timeout": {"0.25"}, "ratio": {"1.5"}, "step": {"0.1", "2", "1000000000000000000000"}}, ""},
		{"zero floats", floats{}, url.Values{"ratio": {"0"}}, ""},
		{"other scalars", scalars{S: "a b", B: &yes, I: -2, U: 7, L: []string{"x", "y"}},
			url.Values{"s": {"a b"}, "b": {"true"}, "i": {"-2"}, "u": {"7"}, "l": {"x", "y"}}, ""},
		{"map", struct {
			M map[string]string `json:"m"`
		}{M: map[string]string{"k": "v"}}, nil, "query field M: map[string]string values cannot be sent in a query"},
		{"slice of structs", struct {
			E []struct{} `json:"e"`
		}{E: []struct{}{{}}}, nil, "query field E: struct {} values cannot be sent in a query"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := encodeQuery(tt.q)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("encodeQuery(%+v) = %v, %v; want error %q", tt.q, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("query (-want +got):\n%s", diff)
			}
		})
	}
}
