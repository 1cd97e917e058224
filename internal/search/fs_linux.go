//go:build linux

package search

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Linux the walker works on raw directory descriptors: a directory is
// opened with openat(parent, name, O_NOFOLLOW|O_DIRECTORY), read with
// getdents64 (whose d_type spares an lstat per entry), and its files are
// opened with openat(dir, name, O_NOFOLLOW). Every name is a single
// component from the directory itself and O_NOFOLLOW refuses a symbolic
// link, so no path can leave the tree; the only descriptors that come
// from a path are the start directory and the targets of symbolic links,
// and those are opened through the *os.Root, which confines them. This is
// the reason for not using (*os.Root).Open per file: it resolves every
// component again and makes ReadDir lstat each entry, three times the
// syscalls of the walk itself.

// dirHandle is an open directory.
type dirHandle struct {
	fd   int
	file *os.File // owns fd when the directory came from the os.Root
}

// dirFromFile wraps f, the directory rel opened through root.
func dirFromFile(_ *os.Root, _ string, f *os.File) (*dirHandle, error) {
	d := &dirHandle{fd: int(f.Fd()), file: f}
	return d, nil
}

func (d *dirHandle) openSubdir(name string) (*dirHandle, error) {
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &dirHandle{fd: fd}, nil
}

func (d *dirHandle) identity() (dev, ino uint64, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return 0, 0, err
	}
	return uint64(st.Dev), st.Ino, nil
}

func (d *dirHandle) close() {
	if d.file != nil {
		d.file.Close()
		return
	}
	unix.Close(d.fd)
}

// readEntries appends the directory's entries (without "." and "..") to
// out. Names are slices of one string per call, to spare an allocation
// per name; buf is scratch space for getdents.
func (d *dirHandle) readEntries(buf []byte, out []rawEntry) ([]rawEntry, error) {
	var names []byte
	type span struct {
		off, end int
		typ      entryType
	}
	var spans []span
	for {
		n, err := unix.Getdents(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			break
		}
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
			if reclen < 19 || reclen > len(b) {
				break
			}
			typ := b[18]
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			b = b[reclen:]
			if len(name) == 0 || (name[0] == '.' && (len(name) == 1 || (len(name) == 2 && name[1] == '.'))) {
				continue
			}
			off := len(names)
			names = append(names, name...)
			spans = append(spans, span{off, len(names), direntType(typ)})
		}
	}
	all := string(names)
	for _, s := range spans {
		out = append(out, rawEntry{name: all[s.off:s.end], typ: s.typ})
	}
	return out, nil
}

func direntType(t byte) entryType {
	switch t {
	case unix.DT_DIR:
		return typeDir
	case unix.DT_REG:
		return typeFile
	case unix.DT_LNK:
		return typeLink
	case unix.DT_UNKNOWN:
		return typeUnknown
	}
	return typeOther
}

// lstatType resolves an entry whose d_type was DT_UNKNOWN.
func (d *dirHandle) lstatType(name string) (entryType, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return typeOther, err
	}
	return modeType(st.Mode), nil
}

// lstat returns the size and modification time (ns) of the entry name
// itself, a symbolic link not followed.
func (d *dirHandle) lstat(name string) (size, mtime int64, err error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, 0, err
	}
	return st.Size, st.Mtim.Nano(), nil
}

func modeType(m uint32) entryType {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return typeDir
	case unix.S_IFREG:
		return typeFile
	case unix.S_IFLNK:
		return typeLink
	}
	return typeOther
}

// openFile opens a regular file of the directory for reading. O_NONBLOCK
// keeps a FIFO swapped in for the file from blocking the worker.
func (d *dirHandle) openFile(name string) (fileHandle, error) {
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return fileHandle{}, err
	}
	return fileHandle{fd: fd}, nil
}

// openat is unix.Openat without the allocation of a NUL-terminated copy
// of name (one per file opened otherwise).
func openat(dir int, name string, flags int) (int, error) {
	var b [256]byte
	if len(name) >= len(b) || strings.IndexByte(name, 0) >= 0 {
		for {
			fd, err := unix.Openat(dir, name, flags, 0)
			if err != unix.EINTR {
				return fd, err
			}
		}
	}
	copy(b[:], name)
	for {
		r, _, e := unix.Syscall6(unix.SYS_OPENAT, uintptr(dir), uintptr(unsafe.Pointer(&b[0])), uintptr(flags), 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return -1, e
		}
		return int(r), nil
	}
}

// fileHandle is an open file: a raw descriptor, or an *os.File for files
// opened through the os.Root.
type fileHandle struct {
	fd int
	f  *os.File
}

func fileFromOS(f *os.File) fileHandle { return fileHandle{fd: -1, f: f} }

// stat returns the size and whether the file is a regular file.
func (h fileHandle) stat() (size int64, regular bool, mtime int64, err error) {
	if h.f != nil {
		fi, err := h.f.Stat()
		if err != nil {
			return 0, false, 0, err
		}
		return fi.Size(), fi.Mode().IsRegular(), fi.ModTime().UnixNano(), nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(h.fd, &st); err != nil {
		return 0, false, 0, err
	}
	return st.Size, st.Mode&unix.S_IFMT == unix.S_IFREG, st.Mtim.Nano(), nil
}

// read reads into p; 0 bytes and a nil error mean end of file.
func (h fileHandle) read(p []byte) (int, error) {
	if h.f != nil {
		n, err := h.f.Read(p)
		return n, eofNil(err)
	}
	for {
		n, err := unix.Read(h.fd, p)
		if err == unix.EINTR {
			continue
		}
		if n < 0 {
			n = 0
		}
		return n, err
	}
}

// readAt reads len(p) bytes at offset off; fewer is an error.
func (h fileHandle) readAt(p []byte, off int64) error {
	if h.f != nil {
		_, err := h.f.ReadAt(p, off)
		return err
	}
	for len(p) > 0 {
		n, err := unix.Pread(h.fd, p, off)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case n == 0:
			return io.ErrUnexpectedEOF
		}
		p, off = p[n:], off+int64(n)
	}
	return nil
}

func (h fileHandle) close() {
	if h.f != nil {
		h.f.Close()
		return
	}
	unix.Close(h.fd)
}

func isLoopErr(err error) bool { return errors.Is(err, unix.ELOOP) }
