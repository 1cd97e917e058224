//go:build race

package testenv

// Race reports whether the binary was built with the race detector, which
// slows code several times over: tests that time or repeat much shrink
// under it.
const Race = true
