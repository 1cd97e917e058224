package search

import (
	"errors"
	"io"
)

// entryType is the kind of a directory entry as the directory reports it.
type entryType uint8

const (
	typeOther   entryType = iota // device, socket, FIFO: never opened
	typeFile                     // regular file
	typeDir                      // directory
	typeLink                     // symbolic link
	typeUnknown                  // the file system did not say; lstat it
)

// rawEntry is one name read from a directory.
type rawEntry struct {
	name string
	typ  entryType
}

func eofNil(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
