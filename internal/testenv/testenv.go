// Package testenv holds what several packages' tests need from the
// machine they run on.
package testenv

import (
	"os/exec"
	"strings"
	"sync"
)

// GOROOT is the Go toolchain's GOROOT, from `go env GOROOT` (tests search
// its source tree as a large real corpus); "" when the go command is
// missing, and the caller should skip.
var GOROOT = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
})
