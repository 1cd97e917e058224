//go:build !unix

package connector

import "syscall"

// canSpin: reading a descriptor without waiting is unix-only here, so a
// SpinConn elsewhere never spins.
const canSpin = false

func readNow(syscall.RawConn, []byte) (n int, again bool) { return 0, false }
