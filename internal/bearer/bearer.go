// Package bearer reads the token of an "Authorization: Bearer <token>"
// header, the one way both the HTTP API and the connector hub take a
// secret in a header. It exists so the two agree on what counts as a
// bearer token: the scheme's name is case-insensitive (RFC 9110 §11.1;
// some clients send "bearer"), and white space around the token is
// dropped, as HTTP drops it around a header value.
package bearer

import (
	"net/http"
	"strings"
)

// Token is the token of r's Authorization header and true, or "" and
// false when the header is missing or names another scheme. The caller
// compares the token in constant time.
func Token(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}
