//go:build !linux

package search

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// On systems other than Linux the walker goes through *os.Root for every
// operation: one os.Root per directory, so each open resolves a single
// name. It is slower (os.Root lstats every entry it lists) but confined
// the same way.

// dirHandle is an open directory.
type dirHandle struct {
	root *os.Root
}

// dirFromFile opens the directory rel of root (f is that directory).
func dirFromFile(root *os.Root, rel string, f *os.File) (*dirHandle, error) {
	f.Close()
	r, err := root.OpenRoot(rel)
	if err != nil {
		return nil, err
	}
	return &dirHandle{root: r}, nil
}

func (d *dirHandle) openSubdir(name string) (*dirHandle, error) {
	fi, err := d.root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOTDIR}
	}
	r, err := d.root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return &dirHandle{root: r}, nil
}

func (d *dirHandle) identity() (dev, ino uint64, err error) {
	fi, err := d.root.Stat(".")
	if err != nil {
		return 0, 0, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino), nil
	}
	return 0, 0, errors.New("no device and inode numbers")
}

func (d *dirHandle) close() { d.root.Close() }

func (d *dirHandle) readEntries(_ []byte, out []rawEntry) ([]rawEntry, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return out, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	for _, e := range ents {
		out = append(out, rawEntry{name: e.Name(), typ: modeType(e.Type())})
	}
	return out, err
}

func modeType(m fs.FileMode) entryType {
	switch {
	case m.IsDir():
		return typeDir
	case m.IsRegular():
		return typeFile
	case m&fs.ModeSymlink != 0:
		return typeLink
	}
	return typeOther
}

func (d *dirHandle) lstatType(name string) (entryType, error) {
	fi, err := d.root.Lstat(name)
	if err != nil {
		return typeOther, err
	}
	return modeType(fi.Mode().Type()), nil
}

// lstat returns the size and modification time (ns) of the entry name
// itself, a symbolic link not followed.
func (d *dirHandle) lstat(name string) (size, mtime int64, err error) {
	fi, err := d.root.Lstat(name)
	if err != nil {
		return 0, 0, err
	}
	return fi.Size(), fi.ModTime().UnixNano(), nil
}

// openFile opens a regular file of the directory for reading; it must
// still be one (not a link swapped in).
func (d *dirHandle) openFile(name string) (fileHandle, error) {
	fi, err := d.root.Lstat(name)
	if err != nil {
		return fileHandle{}, err
	}
	if !fi.Mode().IsRegular() {
		return fileHandle{}, &fs.PathError{Op: "open", Path: name, Err: syscall.ELOOP}
	}
	f, err := d.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fileHandle{}, err
	}
	return fileHandle{f: f}, nil
}

// fileHandle is an open file.
type fileHandle struct {
	f *os.File
}

func fileFromOS(f *os.File) fileHandle { return fileHandle{f: f} }

func (h fileHandle) stat() (size int64, regular bool, mtime int64, err error) {
	fi, err := h.f.Stat()
	if err != nil {
		return 0, false, 0, err
	}
	return fi.Size(), fi.Mode().IsRegular(), fi.ModTime().UnixNano(), nil
}

func (h fileHandle) read(p []byte) (int, error) {
	n, err := h.f.Read(p)
	return n, eofNil(err)
}

// readAt reads len(p) bytes at offset off; fewer is an error.
func (h fileHandle) readAt(p []byte, off int64) error {
	_, err := h.f.ReadAt(p, off)
	return err
}

func (h fileHandle) close() { h.f.Close() }

func isLoopErr(err error) bool { return errors.Is(err, syscall.ELOOP) }
