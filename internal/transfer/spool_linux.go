package transfer

import "golang.org/x/sys/unix"

// oTmpfile makes openSpool's file nameless from the start.
const oTmpfile = unix.O_TMPFILE
