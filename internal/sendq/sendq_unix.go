//go:build linux || darwin

package sendq

import "golang.org/x/sys/unix"

func setLowWater(fd uintptr, n int) error {
	return unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, n)
}
