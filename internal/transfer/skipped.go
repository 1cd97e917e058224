package transfer

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io/fs"
	"strconv"
	"syscall"

	"github.com/fsplane/fsplane/internal/fserr"
)

// A tree download leaves out a regular file it cannot open, as GNU tar
// does ("Cannot open: Permission denied", then it goes on), instead of
// cutting the whole stream there. Nothing of such a file is written, so
// the archive stays valid, and the omission is never silent: the archive
// ends with a note (below) naming what was left out and why, and a writer
// that is a SkipObserver hears of each as it happens (the HTTP front
// turns them into trailers).
//
// The note is the archive's last member before its end-of-archive
// blocks, present only when something was left out: the tree's top
// again, as the directory "./" with the top's mode and time (what
// `tar -C dir -cf - .` archives first), carrying two PAX records:
//
//	FSPLANE.skipped.count  how many entries were left out (decimal)
//	FSPLANE.skipped        a JSON array of Skipped, {"path", "code",
//	                       "message"}, in archive order: all of them, or
//	                       the first ones up to 512 KiB when they are more
//	                       (fewer than the count says)
//
// It sits in the archive rather than only beside it (in an HTTP trailer)
// so that it survives proxies and clients that drop trailers, and a
// saved copy of the archive. It is an ordinary member so that every
// reader takes it: a PAX global header ('g') as the last member, tried
// first, makes Python's tarfile refuse the whole archive ("end of file
// header": it applies a global header to the member after it).
// archive/tar returns it with the records in PAXRecords, Python's
// tarfile in pax_headers, and GNU tar warns "Ignoring unknown extended
// header keyword" for each record while it extracts and lists, exit
// status 0; extracting it sets the destination directory's mode and
// time to the top's, as the first member of `tar -C dir -cf - .` does.
//
// A procfs or sysfs file that cannot be read whole is left out and noted
// the same way: it is read before its header (see writeSnapshot). So is
// what a directory holds when the server may not list or search it: the
// directory itself is archived, empty, as GNU tar archives it, and noted
// by its own name (workspace.TreeEntry.Unlisted).
//
// What is not left out but still cuts the stream: a file that fails
// while its content is copied, after its header promised its size (an
// I/O error, or a file that shrank or was rewritten in place: padding it
// out would forge content), an error of the server rather than of the
// file (out of file descriptors or memory: every later file would fail
// too), and a tree whose top cannot be listed (nothing is written then,
// and the caller answers with the error).
// Files removed, or replaced by something that is not a regular file,
// between the listing and the open are left out without a note: they are
// no longer part of the tree.

// SkippedNoteName is the name of the member that notes the entries a
// tree archive leaves out: the top.
const SkippedNoteName = "./"

// The note's PAX record keys: vendor records, named VENDOR.keyword as
// POSIX reserves them.
const (
	SkippedCountRecord = "FSPLANE.skipped.count"
	SkippedListRecord  = "FSPLANE.skipped"
)

// noteBudget bounds the JSON list of the note: archive/tar refuses to
// read (and write) a PAX header over 1 MiB, and a client reads it into
// memory.
const noteBudget = 512 << 10

// Skipped is an entry a tree archive left out: its name in the archive
// (slash-separated, relative to the tree's top, without a trailing
// slash), the stable fserr code of why (permission_denied for a file
// the server may not read; io_error, invalid_path, outside_root or
// too_large otherwise) and a message for people, which never holds
// server paths or file contents. As JSON, a name that is not UTF-8 has
// U+FFFD for each of its bad bytes.
type Skipped struct {
	Path    string     `json:"path"`
	Code    fserr.Code `json:"code"`
	Message string     `json:"message"`
}

// SkipObserver may be implemented by the io.Writer given to WriteTree
// to hear of each entry left out, as it is left out: all of them, in
// archive order, before the archive's end, even past the note's budget.
// It is called on WriteTree's goroutine, between writes.
type SkipObserver interface {
	TreeEntrySkipped(Skipped)
}

// skippable reports whether err, met opening (or fstat-ing the opened)
// regular file of a tree, is that file's own, so that the file is left
// out and the archive goes on. The server's shortages (file descriptors,
// memory) are not: every file after it would be left out too, so they
// fail the stream and the client may retry.
func skippable(err error) bool {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.ENOBUFS:
			return false
		}
	}
	return true
}

// skipError is a file's own failure met before anything of it was
// written (see skippable): the tree archive leaves the file out and goes
// on.
type skipError struct{ err error }

func (e *skipError) Error() string { return e.err.Error() }
func (e *skipError) Unwrap() error { return e.err }

// skipOr returns err as a *skipError when it is skippable, else as is.
func skipOr(err error) error {
	if skippable(err) {
		return &skipError{err: err}
	}
	return err
}

// reason words why fe left a file out, for people: as fserr words its
// errno ("permission denied"), without the server's path to the file
// that workspace errors begin with (Skipped.Path names the file).
func reason(fe *fserr.Error) string {
	switch {
	case fe.Errno != 0:
		return fserr.FromOS("", "", fe.Errno).Message
	case fe.Err != nil:
		if _, ok := fserr.As(fe.Err); !ok {
			return fserr.FromOS("", "", fe.Err).Message
		}
	}
	return fe.Message
}

// skipNote gathers the entries a tree archive leaves out and writes its
// note. Not safe for concurrent use.
type skipNote struct {
	count    int
	listed   []Skipped
	size     int // bytes of listed as JSON, brackets included
	budget   int // for size
	observer SkipObserver
}

func newSkipNote(observer SkipObserver, budget int) *skipNote {
	return &skipNote{observer: observer, budget: budget, size: len("[]")}
}

// add records that name was left out because of err.
func (n *skipNote) add(name string, err error) {
	fe := fserr.From("tree", name, err)
	s := Skipped{Path: name, Code: fe.Code, Message: reason(fe)}
	n.count++
	if n.observer != nil {
		n.observer.TreeEntrySkipped(s)
	}
	b, jerr := json.Marshal(s)
	if jerr != nil || n.size+len(b)+1 > n.budget {
		return
	}
	n.size += len(b) + 1
	n.listed = append(n.listed, s)
}

// write appends the note to tw when something was left out, as the
// header of top, the tree's top directory.
func (n *skipNote) write(tw *tar.Writer, top fs.FileInfo) error {
	if n.count == 0 {
		return nil
	}
	listed := n.listed
	if listed == nil {
		listed = []Skipped{} // "[]", not "null": the first one did not fit
	}
	list, err := json.Marshal(listed)
	if err != nil {
		return err
	}
	return tw.WriteHeader(&tar.Header{
		Name: SkippedNoteName, Typeflag: tar.TypeDir, Mode: int64(top.Mode().Perm()), ModTime: top.ModTime(), Format: tar.FormatPAX,
		PAXRecords: map[string]string{SkippedCountRecord: strconv.Itoa(n.count), SkippedListRecord: string(list)},
	})
}
