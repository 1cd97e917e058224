package transfer

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// Limits bound an extracted archive.
type Limits struct {
	MaxBytes   int64 // request body and extracted file content, each
	MaxEntries int   // members, directories included
}

// DefaultLimits are AIO's: 4 GiB and 100,000 entries.
var DefaultLimits = Limits{MaxBytes: 4 << 30, MaxEntries: 100_000}

// TreeSink receives the members of an archive; *workspace.TreeWriter is
// one. Names are clean, relative and free of "..".
type TreeSink interface {
	Dir(name string, perm fs.FileMode) error
	File(name string, perm fs.FileMode, r io.Reader) (int64, error)
	Symlink(name, target string) error
	Link(name, target string) error
}

// maxName bounds a member name and a link target, cleaned: PATH_MAX less
// its NUL. maxComponent bounds each of their components (NAME_MAX).
// Longer ones could not be named by a path, and each component of a name
// costs a directory walk in every later operation on it (the tree is
// reached through an os.Root, component by component).
const (
	maxName      = 4095
	maxComponent = 255
)

// MemberName checks a tar member name and returns it cleaned and
// slash-relative ("." for the top). Absolute names, ".." components, NUL
// bytes, empty names and names longer than 4095 bytes (or with a
// component longer than 255) are refused: tar's own "strip the leading /"
// habit is not followed, because an archive that names absolute paths was
// not made for this destination.
func MemberName(name string) (string, error) {
	switch {
	case name == "":
		return "", errors.New("empty member name")
	case strings.IndexByte(name, 0) >= 0:
		return "", errors.New("member name contains a NUL byte")
	case strings.HasPrefix(name, "/"):
		return "", fmt.Errorf("member %q has an absolute name", name)
	}
	for _, c := range strings.Split(name, "/") {
		if c == ".." {
			return "", fmt.Errorf("member %q climbs out of the tree with \"..\"", name)
		}
	}
	clean := path.Clean(name)
	if err := checkLength("member", clean); err != nil {
		return "", err
	}
	return clean, nil
}

// checkLength refuses a name (what: "member", "link target") over
// maxName bytes or with a component over maxComponent bytes.
func checkLength(what, name string) error {
	if len(name) > maxName {
		return fmt.Errorf("%s %.64q... is %d bytes long; names are limited to %d bytes", what, name, len(name), maxName)
	}
	for c := range strings.SplitSeq(name, "/") {
		if len(c) > maxComponent {
			return fmt.Errorf("%s %.64q... has a component of %d bytes; components are limited to %d bytes", what, name, len(c), maxComponent)
		}
	}
	return nil
}

// checkSymlinkTarget checks a symbolic link member's target before the
// sink sees it. The sink keeps the link inside the root by reading the
// target as written (lexically); that is where the link leads only when no
// ".." follows a name, for that name may be a link itself: with s -> ".",
// "s/s/../.." reads as the link's own directory but leads two levels
// above it. So ".." may only lead a target ("../../lib/x"), never follow a
// name in it.
func checkSymlinkTarget(name, target string) error {
	switch {
	case target == "":
		return invalidArchive("symbolic link %q has an empty target", name)
	case strings.IndexByte(target, 0) >= 0:
		return invalidArchive("symbolic link %q has a target with a NUL byte", name)
	}
	if err := checkLength("link target", target); err != nil {
		return invalidArchive("symbolic link %q: %v", name, err)
	}
	if workspace.DotDotAfterName(target) {
		return fserr.New(fserr.BadRequest, "tree", "",
			"invalid tar archive: symbolic link %q -> %q has \"..\" after a name; where it leads cannot be checked, since that name may be a link itself", name, target).
			WithHint("write the target without \"..\" after a name (%q reads the same when no part of it is a link); \"..\" may only lead it, as in ../../dir/file", path.Clean(target))
	}
	return nil
}

// sourceReader remembers the first error of the request body, so a cut
// or oversized body is told apart from a failing write.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// Extract reads an uncompressed tar archive from r into sink and returns
// the number of entries it extracted: the members (global headers aside,
// a directory named twice once) and the directories their names imply
// without a member of their own. It stops at
// the first problem: a bad member name, a device node or FIFO, a hard
// link to something that is not an earlier file, a symbolic link whose
// target has ".." after a name (see checkSymlinkTarget), an archive over
// lim (too_large, 413; the directories that member names imply count as
// entries, checked before the member reaches the sink), a compressed or
// malformed archive, or one cut short: inside a member, or after one
// without the end-of-archive blocks, which archive/tar takes for the end
// (bad_request). The caller discards the sink's work on error.
func Extract(r io.Reader, sink TreeSink, lim Limits) (int, error) {
	src := &sourceReader{r: r}
	br := bufio.NewReaderSize(src, 64<<10)
	if magic, _ := br.Peek(6); bytes.HasPrefix(magic, []byte{0x1f, 0x8b}) || bytes.HasPrefix(magic, []byte{'B', 'Z', 'h'}) ||
		bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0}) || bytes.HasPrefix(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		return 0, invalidArchive("the archive is compressed; send an uncompressed tar")
	}
	consumed := &countReader{r: br}
	tr := tar.NewReader(consumed)
	var total int64
	entries := 0
	// next is where the member after the last one read starts: archive/tar
	// reports the archive's end (io.EOF) when the input ends there, as
	// when it ends after the end-of-archive blocks, so only what it has
	// consumed by then tells a cut archive from a whole one.
	var next int64
	last := ""
	// dirs holds the directories of the tree so far, named by members or
	// implied by their names: the sink makes a missing parent, and it
	// counts as an entry like any other.
	dirs := map[string]bool{".": true}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			// An empty body is an empty archive, as it always was here
			// (GNU tar refuses it): only one cut after a member is
			// refused.
			if last != "" && consumed.n <= next {
				return entries, cutArchive("the archive ends after member %q without its end-of-archive blocks", last)
			}
			return entries, nil
		}
		if err != nil {
			return entries, readErr(src, err, lim)
		}
		next = memberEnd(consumed.n, hdr)
		last = hdr.Name
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		name, err := MemberName(hdr.Name)
		if err != nil {
			return entries, invalidArchive("%v", err)
		}
		// The member is an entry, unless it names a directory already
		// counted, and so is every directory its name implies.
		if hdr.Typeflag != tar.TypeDir || !dirs[name] {
			entries++
		}
		var implied []string
		for d := path.Dir(name); !dirs[d]; d = path.Dir(d) {
			implied = append(implied, d)
		}
		if entries += len(implied); entries > lim.MaxEntries {
			return entries, tooLarge(lim, fmt.Sprintf("the archive has more than %d entries (directories its names imply included)", lim.MaxEntries))
		}
		for _, d := range implied {
			dirs[d] = true
		}
		if hdr.Typeflag == tar.TypeDir {
			dirs[name] = true
		}
		perm := fs.FileMode(hdr.Mode) & fs.ModePerm
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = sink.Dir(name, perm)
		case tar.TypeReg, tar.TypeGNUSparse: // the reader reports old-style files (TypeRegA) as TypeReg
			if name == "." {
				return entries, invalidArchive("member %q is a file named like the tree's top", hdr.Name)
			}
			if hdr.Size < 0 {
				return entries, invalidArchive("member %q has a negative size", hdr.Name)
			}
			if sparse(hdr) {
				// Its holes would be written as zeros: a few kilobytes of
				// archive could fill the disk up to MaxBytes.
				return entries, invalidArchive("member %q is a sparse file, which is not supported; make the archive without --sparse (-S)", hdr.Name)
			}
			if total += hdr.Size; total > lim.MaxBytes {
				return entries, tooLarge(lim, fmt.Sprintf("the archive's files add up to more than %d bytes", lim.MaxBytes))
			}
			member := &sourceReader{r: tr}
			_, err = sink.File(name, perm, member)
			if src.err != nil {
				return entries, readErr(src, src.err, lim)
			}
			if member.err != nil {
				return entries, cutArchive("member %q is truncated: %v", hdr.Name, member.err)
			}
		case tar.TypeSymlink:
			if err := checkSymlinkTarget(hdr.Name, hdr.Linkname); err != nil {
				return entries, err
			}
			err = sink.Symlink(name, hdr.Linkname)
		case tar.TypeLink:
			target, terr := MemberName(hdr.Linkname)
			if terr != nil {
				return entries, invalidArchive("hard link %q: %v", hdr.Name, terr)
			}
			err = sink.Link(name, target)
		case tar.TypeChar, tar.TypeBlock:
			return entries, invalidArchive("member %q is a device node; device nodes are not extracted", hdr.Name)
		case tar.TypeFifo:
			return entries, invalidArchive("member %q is a FIFO; FIFOs are not extracted", hdr.Name)
		default:
			return entries, invalidArchive("member %q has the unsupported type %q", hdr.Name, hdr.Typeflag)
		}
		if err != nil {
			return entries, err
		}
	}
}

func invalidArchive(format string, args ...any) *fserr.Error {
	return fserr.New(fserr.BadRequest, "tree", "", "invalid tar archive: "+format, args...).
		WithHint("send an uncompressed tar of regular files, directories and links inside the tree")
}

// cutArchive reports an archive that ends before its end: its hint is
// not invalidArchive's, for the archive was made right and then cut.
func cutArchive(format string, args ...any) *fserr.Error {
	return fserr.New(fserr.BadRequest, "tree", "", "invalid tar archive: "+format, args...).
		WithHint("send the whole archive: it was cut in transit, or whatever wrote it stopped before its end " +
			"(a tar ends with two 512-byte zero blocks); nothing was extracted")
}

// countReader counts the bytes read through it. archive/tar reads no
// further than it needs: a header a block at a time, a member's data and
// padding as they are read or skipped.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// memberEnd is where the member after hdr starts, given that hdr's
// headers ended at (or, for a global header whose records archive/tar
// has read, its data ends at) off: past its data, padded to a block.
// Members of the header-only types have no data, whatever Size says, as
// archive/tar reads them.
func memberEnd(off int64, hdr *tar.Header) int64 {
	size := hdr.Size
	switch hdr.Typeflag {
	case tar.TypeLink, tar.TypeSymlink, tar.TypeChar, tar.TypeBlock, tar.TypeDir, tar.TypeFifo:
		size = 0
	}
	const block = 512
	return (off + size + block - 1) / block * block
}

// tooLarge reports an archive over lim, the limits in force (not
// necessarily DefaultLimits).
func tooLarge(lim Limits, msg string) *fserr.Error {
	return fserr.New(fserr.TooLarge, "tree", "", "%s", msg).
		WithHint("split the tree into several archives (limits: %d bytes, %d entries)", lim.MaxBytes, lim.MaxEntries)
}

// readErr classifies an error met while reading the archive.
func readErr(src *sourceReader, err error, lim Limits) error {
	if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok || src.err != nil {
		if ok || errors.As(src.err, &mbe) {
			return tooLarge(lim, fmt.Sprintf("the request body exceeds %d bytes", lim.MaxBytes))
		}
		e := fserr.New(fserr.BadRequest, "tree", "", "the archive could not be read: the request body ended early or failed")
		e.Err = src.err
		return e
	}
	return invalidArchive("%v", err)
}

// WriteTree writes the directory p as a tar archive to w: directories
// (with a trailing slash), regular files and symbolic links, names
// relative to p, permission bits and modification times; sockets,
// FIFOs and devices are skipped. Hard links are kept as GNU tar keeps
// them: the first name of a file in the archive carries its content, and
// each later name whose opened file is the same (device and inode) is a
// hard link member naming it; names outside p, or skipped, do not count.
// Remembering first names takes at most 16 MiB (see linkSet); past that,
// later names of files not yet remembered carry their content.
//
// A regular file that cannot be opened (one the server may not read,
// say) is left out, nothing of it written, and the archive goes on; the
// archive then ends with a note naming every entry left out and why, and
// a w that is a SkipObserver hears of each (see skipped.go). The archive
// is never whole-looking yet incomplete without that note. A file that
// shrinks while it is archived fails the stream (the archive would lie);
// one that grows is archived at its size when its header was written,
// unless it has several names: fsplane rewrites those in place, so, as
// in a download, any change of their content while it is copied fails
// the stream; so does any error reading a file once its header is out.
// A directory the server may not list or search is archived without its
// entries, and noted. Files of procfs and sysfs,
// whose size stat does not give, are read whole before their header, as
// a download reads them, and left out (and noted) when that fails (see
// writeSnapshot). The walk checks p before anything is written, so an
// error with nothing written (see the returned count) can still be
// reported.
func WriteTree(w io.Writer, ws *workspace.Workspace, p string) (written int64, err error) {
	return writeTree(w, ws, p, treeOptions{})
}

// treeOptions are writeTree's knobs for tests.
type treeOptions struct {
	// fault, when set, is called with each regular file's archive name
	// before it is opened; an error from it stands in for the open's
	// (root opens every file, so a test cannot make one unreadable).
	fault func(name string) error
	// noteBudget bounds the note's list; 0 is noteBudget.
	noteBudget int
}

func writeTree(w io.Writer, ws *workspace.Workspace, p string, opts treeOptions) (written int64, err error) {
	cw := &countWriter{w: w}
	tw := tar.NewWriter(cw)
	buf := make([]byte, 256<<10)
	links := newLinkSet(linkMemory)
	observer, _ := w.(SkipObserver)
	budget := opts.noteBudget
	if budget == 0 {
		budget = noteBudget
	}
	skips := newSkipNote(observer, budget)
	var top fs.FileInfo // the tree's top, for the note
	_, err = ws.WalkTree(p, func(e workspace.TreeEntry, open func() (*os.File, error)) error {
		if e.Unlisted != nil && (e.Name == "." || !skippable(e.Unlisted)) {
			return e.Unlisted // the whole tree, or the server's shortage
		}
		if e.Name == "." {
			top = e.Info
			return nil
		}
		hdr := &tar.Header{Name: e.Name, Mode: int64(e.Info.Mode().Perm()), ModTime: e.Info.ModTime(), Format: tar.FormatPAX}
		switch m := e.Info.Mode(); {
		case m.IsDir():
			hdr.Typeflag, hdr.Name = tar.TypeDir, e.Name+"/"
			if e.Unlisted != nil {
				// As GNU tar: the directory, without what it holds.
				skips.add(e.Name, e.Unlisted)
			}
		case m&fs.ModeSymlink != 0:
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, e.Link
		case m.IsRegular():
			if opts.fault != nil {
				opener := open
				open = func() (*os.File, error) {
					if err := opts.fault(e.Name); err != nil {
						return nil, err
					}
					return opener()
				}
			}
			err := writeFile(tw, hdr, open, buf, links)
			if se, ok := errors.AsType[*skipError](err); ok {
				skips.add(hdr.Name, se.err)
				return nil
			}
			return err
		default:
			return nil
		}
		return tw.WriteHeader(hdr)
	})
	if err == nil {
		err = skips.write(tw, top)
	}
	if err == nil {
		err = tw.Close()
	}
	return cw.n, err
}

// writeFile archives the regular file hdr names, opened by open: as a
// hard link member when links has its inode, else with its content,
// recording the inode in links once that is written whole. A file that
// cannot be opened (or fstat-ed once open) for a reason of its own (see
// skippable) is a *skipError, nothing of it written: the caller leaves
// it out and goes on.
func writeFile(tw *tar.Writer, hdr *tar.Header, open func() (*os.File, error), buf []byte, links *linkSet) error {
	f, err := open()
	if err != nil {
		if fserr.Is(err, fserr.NotFound) {
			return nil // removed while we walked
		}
		return skipOr(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return skipOr(err)
	}
	if !fi.Mode().IsRegular() {
		// Replaced since the walk saw it (by a directory, or by a link
		// the open followed to a FIFO or device): left out, like a file
		// removed meanwhile.
		return nil
	}
	if sizeSuspect(fi) && pseudoFS(f) {
		return writeSnapshot(tw, hdr, f)
	}
	id, nlink, linked := linkedInode(fi)
	if linked {
		if first, ok := links.take(id); ok {
			hdr.Typeflag, hdr.Linkname = tar.TypeLink, first
			return tw.WriteHeader(hdr)
		}
	}
	hdr.Typeflag, hdr.Size = tar.TypeReg, fi.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	// From here on the header has promised hdr.Size bytes: a failure
	// can only cut the stream (zeros would forge content).
	n, err := io.CopyBuffer(tw, io.LimitReader(f, hdr.Size), buf)
	if err != nil {
		return err
	}
	if n != hdr.Size {
		return fserr.New(fserr.Conflict, "tree", "", "%s shrank while it was archived; the archive is cut short", hdr.Name).
			WithHint("download the tree again once the file is no longer being written")
	}
	if linked {
		// fsplane rewrites a file with several names in place (growing
		// it first), so its bytes may mix two contents: as a download
		// of it, it is checked once read.
		if now, err := f.Stat(); err != nil || !intactSince(keyOf(fi), nlink, now) {
			return fserr.New(fserr.Conflict, "tree", "", "%s was rewritten in place while it was archived; the archive is cut short rather than mix two contents", hdr.Name).
				WithHint("download the tree again once the file is no longer being written")
		}
		links.record(id, nlink, hdr.Name)
	}
	return nil
}

// writeSnapshot archives f, a file of procfs or sysfs, whose size stat
// does not give (see sizeSuspect), at the size of its content read whole
// first, as a download reads it (up to MemLimit). A file that cannot be
// read so (an error, as sysfs gives for some attributes, or more than
// MemLimit) has no content to archive: it is a *skipError, as the read
// happens before its header.
func writeSnapshot(tw *tar.Writer, hdr *tar.Header, f *os.File) error {
	b, err := io.ReadAll(io.LimitReader(f, MemLimit+1))
	if err != nil {
		// A read's failure, whatever its errno (sysfs gives EINVAL):
		// io_error unless it is a refusal, or the file is gone.
		fe := fserr.FromOS("tree", "", err)
		switch fe.Code {
		case fserr.NotFound:
			return nil // gone meanwhile (a closed descriptor's fdinfo)
		case fserr.PermissionDenied:
		default:
			fe.Code = fserr.IOError
		}
		return skipOr(fe)
	}
	if int64(len(b)) > MemLimit {
		return skipOr(fserr.New(fserr.TooLarge, "tree", "", "a generated file of more than %d bytes", MemLimit))
	}
	hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(b))
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = tw.Write(b)
	return err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// sparse reports whether hdr is a sparse file: an old GNU one, or one
// whose PAX records carry a sparse map (GNU formats 0.0 to 1.0), which
// archive/tar reports as a plain file with its holes read as zeros.
func sparse(hdr *tar.Header) bool {
	if hdr.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}
