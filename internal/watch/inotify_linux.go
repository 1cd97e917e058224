package watch

import (
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// watchMask is what every directory watch asks for. IN_DONT_FOLLOW and
// IN_ONLYDIR make the kernel refuse a path that became a link or a file
// between our lstat and the watch, so a watch never lands outside the
// tree through a swapped-in link.
const watchMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_DELETE | unix.IN_DELETE_SELF |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_MOVE_SELF | unix.IN_DONT_FOLLOW | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

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

func (in *inotify) add(path string) (int32, error) {
	wd, err := unix.InotifyAddWatch(in.fd, path, watchMask)
	return int32(wd), err
}

func (in *inotify) remove(wd int32) { _, _ = unix.InotifyRmWatch(in.fd, uint32(wd)) }

func (in *inotify) read(buf []byte) (int, error) { return in.file.Read(buf) }

// setDeadline bounds the reads to come (the zero time: no bound).
func (in *inotify) setDeadline(t time.Time) error { return in.file.SetReadDeadline(t) }

func (in *inotify) close() error { return in.file.Close() }

// kernelEvent is one parsed struct inotify_event.
type kernelEvent struct {
	wd     int32
	mask   uint32
	cookie uint32
	name   string
}

// parseEvents splits a read of the inotify fd into events; a truncated
// tail is ignored (the kernel never returns one).
func parseEvents(b []byte, fn func(kernelEvent)) {
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
		fn(ev)
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

// identify returns the identity of the file at p, not following a final
// symbolic link.
func identify(p string) (fileID, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, true
}
