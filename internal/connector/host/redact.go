package host

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
)

// masked stands for a secret in what the host shows (as url.Redacted
// masks a password).
const masked = "xxxxx"

// maskUserinfo masks what comes before the last '@' of raw's authority
// (after "scheme://", or from the start without one).
func maskUserinfo(raw string) string {
	prefix, rest := "", raw
	if scheme, r, ok := strings.Cut(raw, "://"); ok {
		prefix, rest = scheme+"://", r
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		return prefix + masked + rest[at:]
	}
	return raw
}

// RedactURL returns a hub URL fit to print or log: every query value (a
// hub behind a proxy may take its token as ?token=, ?api_key=, …), the
// fragment and a password are masked; the scheme, host, path and query
// keys are kept. A URL that does not parse, or has no "://", has its user
// information and everything from its first '?' or '#' on masked.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || !strings.Contains(raw, "://") {
		// Unparsed, or parsed without an authority ("user:pw@host:8080"
		// has the scheme "user" and the rest opaque): masked as text.
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			raw = raw[:i+1] + masked
		}
		return maskUserinfo(raw)
	}
	if u.User != nil {
		// A user name alone ("https://TOKEN@hub") is how a token is
		// usually put in a URL: only a password beside it makes it a name.
		if pw, ok := u.User.Password(); !ok || pw == "" {
			u.User = url.User(masked)
		}
	}
	u.RawQuery = redactQuery(u.RawQuery)
	if u.Fragment != "" || u.RawFragment != "" {
		u.Fragment, u.RawFragment = masked, ""
	}
	return u.Redacted()
}

// redactQuery masks each value of a raw query, and each element without
// one (it may be a bare token).
func redactQuery(q string) string {
	if q == "" {
		return ""
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok {
			parts[i] = k + "=" + masked
		} else if p != "" {
			parts[i] = masked
		}
	}
	return strings.Join(parts, "&")
}

// scrubbed is an error whose text had the dial URL's secrets masked; it
// still unwraps to the original for errors.Is.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// scrub masks the query of the URL the host dials wherever err's text
// quotes it: net/http's and the WebSocket library's errors name the URL
// they failed on, and those errors are printed on every reconnection.
func (h *Host) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := h.scrubText(msg); clean != msg {
		return &scrubbed{msg: clean, err: err}
	}
	return err
}

// scrubText masks the query of the URL the host dials wherever msg
// quotes it (see scrub).
func (h *Host) scrubText(msg string) string {
	u, err := url.Parse(h.url)
	if err != nil || u.RawQuery == "" {
		return msg
	}
	q := "?" + u.RawQuery
	repl := "?" + redactQuery(u.RawQuery)
	clean := strings.ReplaceAll(msg, q, repl)
	if quoted := strconv.Quote(q); len(quoted) > 2 {
		clean = strings.ReplaceAll(clean, quoted[1:len(quoted)-1], repl) // as %q renders it
	}
	return clean
}

// parseError is url.Parse's complaint without the URL it quotes.
func parseError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
