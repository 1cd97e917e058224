package host

import (
	"errors"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"http://127.0.0.1:18091/?token=QTOKsecret55", "http://127.0.0.1:18091/?token=xxxxx"},
		{"wss://hub.example/p/v2/connector?api_key=k1&key=k2&access_token=k3&x=1", "wss://hub.example/p/v2/connector?api_key=xxxxx&key=xxxxx&access_token=xxxxx&x=xxxxx"},
		{"http://hub/?baretoken&a=", "http://hub/?xxxxx&a=xxxxx"},
		{"http://u:pass@hub/?token=t#frag", "http://u:xxxxx@hub/?token=xxxxx#xxxxx"},
		{"http://hub:18091", "http://hub:18091"},
		// A user name alone is a token put in the URL.
		{"https://QTOKsecret55@hub/x", "https://xxxxx@hub/x"},
		{"ws://QTOKsecret55:@hub/x", "ws://xxxxx@hub/x"},
		{"http://127.0.0.1:bad/?token=QTOK", "http://127.0.0.1:bad/?xxxxx"},
		{"http://u:pass@hub:bad/x", "http://xxxxx@hub:bad/x"},
		{"http://hub/%zz?token=QTOK", "http://hub/%zz?xxxxx"},
		{"user:s3cret@hub.example:8080", "xxxxx@hub.example:8080"},
		{"s3cret@hub:8080/x?token=QTOK", "xxxxx@hub:8080/x?xxxxx"},
		{"hub:8080", "hub:8080"},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestHubURLErrorsHideSecrets: a URL refused at start is quoted in the
// error without its query values or password.
func TestHubURLErrorsHideSecrets(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"ftp://hub/?token=QTOKsecret55",
		"http://u:QTOKsecret55@hub/",
		"http://QTOKsecret55@hub/",
		"https://QTOKsecret55:@hub/",
		"http://127.0.0.1:bad/?token=QTOKsecret55",
		"http:///?token=QTOKsecret55",
		"http://hub/\x7f?token=QTOKsecret55",
		"user:QTOKsecret55@hub.example:8080",
		"QTOKsecret55@hub:8080",
	} {
		_, err := HubURL(raw)
		if err == nil || strings.Contains(err.Error(), "QTOKsecret55") {
			t.Errorf("HubURL(%q): %v", raw, err)
		}
	}
}

// TestDialErrorsHideSecrets: the dial URL's query is masked in the errors
// that quote it, plainly or as %q renders it, and errors.Is still sees the
// cause.
func TestDialErrorsHideSecrets(t *testing.T) {
	t.Parallel()
	h := &Host{url: `ws://hub/v2/connector?token=QTOK"secret55`}
	for _, msg := range []string{
		`Get "http://hub/v2/connector?token=QTOK\"secret55": refused`,
		`Get http://hub/v2/connector?token=QTOK"secret55: refused`,
	} {
		cause := errors.New(msg)
		err := h.scrub(cause)
		if strings.Contains(err.Error(), "secret55") || !strings.Contains(err.Error(), "?token=xxxxx") || !errors.Is(err, cause) {
			t.Errorf("scrub(%q) = %q", msg, err)
		}
	}
}
