package httpapi

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// publicPaths answer without a key: probes and the API description.
var publicPaths = map[string]bool{
	"/": true, "/health": true, "/v1/ping": true,
	"/openapi.json": true, "/v1/openapi.json": true, "/v2/openapi.json": true,
}

// selfAuthenticated paths check their own credentials: the connector
// endpoint takes the connector token, which may differ from the API key.
var selfAuthenticated = map[string]bool{"/v2/connector": true}

// requireKey rejects requests without the API key (when one is set) before
// any handler runs, WebSocket upgrades included. The key is accepted as
// "Authorization: Bearer", "x-api-key" or "?api_key=", compared in
// constant time, and never logged (see logRequests).
func requireKey(key string, next http.Handler) http.Handler {
	if key == "" {
		return next
	}
	want := []byte(key)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if publicPaths[r.URL.Path] || selfAuthenticated[r.URL.Path] || keyMatches(r, want) {
			next.ServeHTTP(w, r)
			return
		}
		writeJSON(w, http.StatusUnauthorized, envelope{Success: false, Message: "Unauthorized"})
	})
}

func keyMatches(r *http.Request, want []byte) bool {
	var candidates []string
	if a := r.Header.Get("Authorization"); a != "" {
		if k, ok := strings.CutPrefix(a, "Bearer "); ok {
			candidates = append(candidates, strings.TrimSpace(k))
		}
	}
	if k := r.Header.Get("X-Api-Key"); k != "" {
		candidates = append(candidates, k)
	}
	if k := r.URL.Query().Get("api_key"); k != "" {
		candidates = append(candidates, k)
	}
	match := 0
	for _, c := range candidates {
		match |= subtle.ConstantTimeCompare([]byte(c), want)
	}
	return match == 1
}
