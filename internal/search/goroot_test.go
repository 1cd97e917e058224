package search

import (
	"os/exec"
	"strings"
	"sync"
)

// goroot is the Go toolchain's GOROOT, from `go env GOROOT` (the tests
// search its source tree); "" when the go command is missing.
var goroot = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
})
