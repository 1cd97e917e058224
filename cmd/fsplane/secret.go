package main

import (
	"fmt"
	"strings"

	"github.com/fsplane/fsplane/internal/connector/host"
)

// headerSecret is a key or token as given by source (a flag, or the
// variable that set it), for use in an HTTP header: surrounding white
// space dropped, as HTTP drops it from a header's value (a secret file's
// final newline, or the \r of one written on Windows, is no part of the
// secret); refused when only white space was given (asked for a key, the
// caller would get none) or a control character remains, which no header
// can carry (the server would refuse every client, connect fail every
// dial). The error never repeats the value.
func headerSecret(source, raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" && raw != "" {
		return "", fmt.Errorf("%s: the value is only white space; give the secret, or leave it out", source)
	}
	if err := host.CheckToken(s); err != nil {
		return "", fmt.Errorf("%s: %v; remove it", source, err)
	}
	return s, nil
}
