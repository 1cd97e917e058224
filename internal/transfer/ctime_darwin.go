package transfer

import "syscall"

// ctimeOf returns the inode change time in nanoseconds.
func ctimeOf(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
