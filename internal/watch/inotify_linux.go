package watch

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsplane/fsplane/internal/osfd"
	"golang.org/x/sys/unix"
)

// watchMask is what every directory watch asks for. Watches are added
// through /proc/self/fd/N, the magic link to a directory the registry
// holds open (see addDir), so IN_DONT_FOLLOW must not be set: it would put
// the watch on that link itself. IN_ONLYDIR still refuses anything but a
// directory.
const watchMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_DELETE | unix.IN_DELETE_SELF |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

// Kernel event bits, named for the handler.
const (
	inCreate     = unix.IN_CREATE
	inModify     = unix.IN_MODIFY
	inAttrib     = unix.IN_ATTRIB
	inDelete     = unix.IN_DELETE
	inDeleteSelf = unix.IN_DELETE_SELF
	inMoveSelf   = unix.IN_MOVE_SELF
	inMovedFrom  = unix.IN_MOVED_FROM
	inMovedTo    = unix.IN_MOVED_TO
	inIgnored    = unix.IN_IGNORED
	inIsDir      = unix.IN_ISDIR
	inOverflow   = unix.IN_Q_OVERFLOW
)

// eventHeader is the size of struct inotify_event without its name.
const eventHeader = unix.SizeofInotifyEvent

// inotify is one inotify instance.
type inotify struct {
	fd   int
	file *os.File // owns fd; reads block in the runtime poller
}

func newInotify() (*inotify, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		if errors.Is(err, unix.EMFILE) {
			return nil, &Error{Kind: Unavailable, Message: "cannot start file watching: the per-user limit of inotify instances (fs.inotify.max_user_instances) is reached; stop other watching programs or raise the limit"}
		}
		return nil, &Error{Kind: Unavailable, Message: "cannot start file watching: inotify is unavailable: " + err.Error()}
	}
	return &inotify{fd: fd, file: os.NewFile(uintptr(fd), "inotify")}, nil
}

// addDir adds a watch on the directory d holds open. inotify_add_watch
// takes a path, so it is given /proc/self/fd/N, which the kernel resolves
// to the very file behind the descriptor, not by name: the watch lands
// on d even when the path d was opened by now leads elsewhere.
func (in *inotify) addDir(d *os.File) (int32, error) {
	var wd int
	err := osfd.With(d, func(fd int) error {
		var err error
		wd, err = unix.InotifyAddWatch(in.fd, procFD(fd), watchMask)
		return err
	})
	return int32(wd), err
}

func procFD(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// checkProcFD reports, as unavailable, that /proc/self/fd does not lead
// to this process's descriptors (/proc is not mounted, or something else
// is mounted there). Watches cannot be added by descriptor then, and
// adding them by path would let a symbolic link swapped into a path put
// them outside the tree, so there is no watching at all.
func (in *inotify) checkProcFD() error {
	var own, via unix.Stat_t
	if err := unix.Fstat(in.fd, &own); err == nil {
		if err := unix.Stat(procFD(in.fd), &via); err == nil && own.Dev == via.Dev && own.Ino == via.Ino {
			return nil
		}
	}
	return errNoProcFD
}

func (in *inotify) remove(wd int32) { _, _ = unix.InotifyRmWatch(in.fd, uint32(wd)) }

// readLocked reads events into buf and returns holding mu, which it
// takes before the read (hook, when set, runs first, without mu). So
// whoever holds mu otherwise sees no event read and not yet handled: the
// bytes read so far and those still queued (queued) add up to the
// position of the next event the kernel queues (Registry.position). On
// an error (the deadline, the descriptor closed, end of file) mu is not
// held.
func (in *inotify) readLocked(buf []byte, mu *sync.Mutex, hook func()) (int, error) {
	rc, err := in.file.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		if hook != nil {
			hook()
		}
		mu.Lock()
		for {
			n, rerr = unix.Read(int(fd), buf)
			if rerr != unix.EINTR {
				break
			}
		}
		if rerr == unix.EAGAIN {
			mu.Unlock()
			return false // wait until readable
		}
		return true
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		mu.Unlock()
		return 0, rerr
	case n == 0:
		mu.Unlock()
		return 0, io.EOF
	}
	return n, nil
}

// queued returns how many bytes of events wait to be read (0 when the
// kernel does not say).
func (in *inotify) queued() uint64 {
	var n int
	_ = osfd.With(in.file, func(fd int) error {
		var err error
		n, err = unix.IoctlGetInt(fd, unix.TIOCINQ) // FIONREAD
		return err
	})
	return uint64(max(n, 0))
}

// setDeadline bounds the reads to come (the zero time: no bound).
func (in *inotify) setDeadline(t time.Time) error { return in.file.SetReadDeadline(t) }

func (in *inotify) close() error { return in.file.Close() }

// kernelEvent is one parsed struct inotify_event.
type kernelEvent struct {
	wd     int32
	mask   uint32
	cookie uint32
	name   string
	// pos and end are where the event starts and ends in the stream of
	// bytes read from the inotify descriptor (see Registry.readEnd); the
	// reader sets them.
	pos, end uint64
}

// parseEvents splits a read of the inotify fd into events, giving each
// with its offset in b and that of its end; a truncated tail is ignored
// (the kernel never returns one).
func parseEvents(b []byte, fn func(ev kernelEvent, off, end int)) {
	off := 0
	for len(b) >= eventHeader {
		ev := kernelEvent{
			wd:     int32(binary.NativeEndian.Uint32(b[0:4])),
			mask:   binary.NativeEndian.Uint32(b[4:8]),
			cookie: binary.NativeEndian.Uint32(b[8:12]),
		}
		n := int(binary.NativeEndian.Uint32(b[12:16]))
		if n > len(b)-eventHeader {
			return
		}
		name := b[eventHeader : eventHeader+n]
		if i := strings.IndexByte(string(name), 0); i >= 0 {
			name = name[:i]
		}
		ev.name = string(name)
		b = b[eventHeader+n:]
		fn(ev, off, off+eventHeader+n)
		off += eventHeader + n
	}
}

// isNoSpace reports the kernel's "out of watches" error.
func isNoSpace(err error) bool { return errors.Is(err, unix.ENOSPC) }

// maxUserWatches reads fs.inotify.max_user_watches (0 when unknown).
func maxUserWatches() int {
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// fileID identifies a directory: what a watch is on.
type fileID struct{ dev, ino uint64 }

// entryInfo is what a stat through a descriptor tells.
type entryInfo struct {
	id    fileID
	isDir bool
	stat  FileStat
}

func infoOf(st *unix.Stat_t) entryInfo {
	return entryInfo{
		id:    fileID{dev: uint64(st.Dev), ino: st.Ino},
		isDir: st.Mode&unix.S_IFMT == unix.S_IFDIR,
		stat:  FileStat{ModTime: time.Unix(st.Mtim.Unix()), Size: st.Size, Inode: st.Ino},
	}
}

// statDir describes the directory d holds open.
func statDir(d *os.File) (entryInfo, error) {
	var st unix.Stat_t
	err := osfd.With(d, func(fd int) error { return unix.Fstat(fd, &st) })
	if err != nil {
		return entryInfo{}, err
	}
	return infoOf(&st), nil
}

// statAt describes the entry name of the directory d holds open, not
// following a symbolic link (fstatat, AT_SYMLINK_NOFOLLOW).
func statAt(d *os.File, name string) (entryInfo, error) {
	if !oneName(name) {
		return entryInfo{}, unix.EINVAL
	}
	var st unix.Stat_t
	err := osfd.With(d, func(fd int) error { return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) })
	if err != nil {
		return entryInfo{}, err
	}
	return infoOf(&st), nil
}

// openSub opens the directory name of the directory d holds open,
// relative to d's descriptor and refusing a symbolic link (O_NOFOLLOW:
// ELOOP) or anything but a directory (ENOTDIR). The caller closes it.
func openSub(d *os.File, name string) (*os.File, error) {
	if !oneName(name) {
		return nil, &os.PathError{Op: "openat", Path: name, Err: unix.EINVAL}
	}
	var fd int
	err := osfd.With(d, func(dfd int) error {
		for {
			var err error
			fd, err = unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != unix.EINTR {
				return err
			}
		}
	})
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: path.Join(d.Name(), name), Err: err}
	}
	return os.NewFile(uintptr(fd), path.Join(d.Name(), name)), nil
}

// oneName reports whether name is one entry of a directory: no
// separator, not "." or "..".
func oneName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsRune(name, '/')
}

// openPath is the registry's opener when its Options name none: it opens
// the directory p, following symbolic links, confining nothing.
func openPath(p string) (*os.File, error) {
	for {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: p, Err: err}
		}
		return os.NewFile(uintptr(fd), p), nil
	}
}
