package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestHostTimeoutOutOfRangeIsRefused: ?timeout= on a host route must be a
// number of seconds in (0, 3600]; anything else is 422 before any host is
// looked up. NaN used to pass (it compares false both ways) and silently
// became the default deadline.
func TestHostTimeoutOutOfRangeIsRefused(t *testing.T) {
	t.Parallel()
	e := newHubEnv(t, false)
	for _, tt := range []struct {
		timeout string
		status  int
	}{
		{"NaN", http.StatusUnprocessableEntity},
		{"nan", http.StatusUnprocessableEntity},
		{"-NaN", http.StatusUnprocessableEntity},
		{"0", http.StatusUnprocessableEntity},
		{"-1", http.StatusUnprocessableEntity},
		{"3601", http.StatusUnprocessableEntity},
		{"Inf", http.StatusUnprocessableEntity},
		{"abc", http.StatusUnprocessableEntity},
		{"0.5", http.StatusServiceUnavailable}, // valid: then no host is connected
		{"3600", http.StatusServiceUnavailable},
	} {
		t.Run(tt.timeout, func(t *testing.T) {
			t.Parallel()
			resp, body, err := get(t, e.url+"/v2/hosts/-/fs/stat?path=a.txt&timeout="+tt.timeout)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Fatalf("timeout=%s: %s %s, want %d", tt.timeout, resp.Status, body, tt.status)
			}
			if tt.status == http.StatusUnprocessableEntity && !strings.Contains(string(body), "(0, 3600]") {
				t.Errorf("timeout=%s: %s, want the range named", tt.timeout, body)
			}
		})
	}
}
