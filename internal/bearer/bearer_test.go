package bearer

import (
	"net/http/httptest"
	"testing"
)

func TestToken(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		header string
		want   string
		ok     bool
	}{
		{"Bearer k3y", "k3y", true},
		{"bearer k3y", "k3y", true},
		{"BEARER  k3y ", "k3y", true},
		{"Basic k3y", "", false},
		{"Bearerk3y", "", false},
		{"", "", false},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if tt.header != "" {
			r.Header.Set("Authorization", tt.header)
		}
		got, ok := Token(r)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Authorization %q: got %q, %v; want %q, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}
