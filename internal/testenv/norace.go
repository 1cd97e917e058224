//go:build !race

package testenv

// Race reports whether the binary was built with the race detector (see
// race.go).
const Race = false
