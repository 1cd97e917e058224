//go:build unix

package main

import (
	"os"
	"syscall"
)

// execSelf runs this program again in place of the process (see reexec).
func execSelf(env []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(exe, os.Args, env)
}
