//go:build unix

package connector

import "syscall"

const canSpin = true

// readNow reads what the socket holds without waiting: n > 0 bytes read,
// or again when it holds nothing yet. Anything else (end of stream, an
// error) is neither, and the caller's blocking read reports it. Control,
// not RawConn.Read: it ignores the deadline SpinConn.Expect may set
// meanwhile, and never waits in the poller.
func readNow(raw syscall.RawConn, p []byte) (n int, again bool) {
	var errno error
	if err := raw.Control(func(fd uintptr) { n, errno = syscall.Read(int(fd), p) }); err != nil {
		return 0, false
	}
	if errno != nil {
		return 0, errno == syscall.EAGAIN
	}
	return n, false
}
