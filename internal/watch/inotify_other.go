//go:build !linux

package watch

import (
	"errors"
	"os"
	"sync"
	"time"
)

type inotify struct{}

func newInotify() (*inotify, error) {
	return nil, &Error{Kind: Unavailable, Message: "file watching needs Linux (inotify)"}
}

func (*inotify) addDir(*os.File) (int32, error)                      { return 0, errors.ErrUnsupported }
func (*inotify) checkProcFD() error                                  { return errors.ErrUnsupported }
func (*inotify) remove(int32)                                        {}
func (*inotify) readLocked([]byte, *sync.Mutex, func()) (int, error) { return 0, errors.ErrUnsupported }
func (*inotify) queued() uint64                                      { return 0 }
func (*inotify) close() error                                        { return nil }
func (*inotify) setDeadline(time.Time) error                         { return errors.ErrUnsupported }

type kernelEvent struct {
	wd     int32
	mask   uint32
	cookie uint32
	name   string
	pos    uint64
	end    uint64
}

const (
	inCreate, inModify, inAttrib, inDelete, inDeleteSelf   = 1, 2, 4, 8, 16
	inMovedFrom, inMovedTo, inIgnored, inIsDir, inOverflow = 32, 64, 128, 256, 512
	inMoveSelf                                             = 2048
)

func parseEvents([]byte, func(kernelEvent, int, int)) {}
func isNoSpace(error) bool                            { return false }
func maxUserWatches() int                             { return 0 }

// Nothing below runs: creating the inotify instance fails first.

type fileID struct{}

type entryInfo struct {
	id    fileID
	isDir bool
	stat  FileStat
}

func statDir(*os.File) (entryInfo, error)        { return entryInfo{}, errors.ErrUnsupported }
func statAt(*os.File, string) (entryInfo, error) { return entryInfo{}, errors.ErrUnsupported }
func openSub(*os.File, string) (*os.File, error) { return nil, errors.ErrUnsupported }
func openPath(p string) (*os.File, error)        { return os.Open(p) }
