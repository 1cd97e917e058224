//go:build !linux

package transfer

// oTmpfile is 0 where there is no O_TMPFILE: openSpool unlinks a named
// file instead.
const oTmpfile = 0
