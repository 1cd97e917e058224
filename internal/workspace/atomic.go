package workspace

import (
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"syscall"
	"unicode/utf8"

	"github.com/fsplane/fsplane/internal/osfd"
	"golang.org/x/sys/unix"
)

// The write primitives. They take relative paths inside an *os.Root and
// return raw OS errors; the caller maps them and owns the cleanup.

// maxBaseInName keeps ".<base>.fsplane-<16 hex>.tmp" within NAME_MAX (255).
const maxBaseInName = 200

// siblingName returns the name of a temp or backup file beside rel:
// ".<base>.fsplane-<tag>.<ext>". The leading dot keeps it out of plain
// listings; the fixed infix lets a person (and the crash test) find strays.
func siblingName(rel, tag, ext string) string {
	base := path.Base(rel)
	if len(base) > maxBaseInName {
		cut := maxBaseInName
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	return path.Join(path.Dir(rel), "."+base+".fsplane-"+tag+"."+ext)
}

func randomTag() string {
	var b [8]byte
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
	return hex.EncodeToString(b[:])
}

// fileMeta is what a replacement inherits from the file it replaces.
type fileMeta struct {
	mode     fs.FileMode // permission and setuid/setgid/sticky bits
	uid, gid int         // -1: leave as created
	xattrSrc *os.File    // copy extended attributes from it; may be nil
}

// permBits are the mode bits a file's content write keeps or sets.
const permBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// createTemp creates a new temp file beside rel with O_EXCL, so it never
// opens something that already exists (a planted link, a stale temp).
func createTemp(r *os.Root, rel string) (*os.File, string, error) {
	for range 4 {
		name := siblingName(rel, randomTag(), "tmp")
		noteTemp(r, name) // first: a crash right after the create leaves no unlogged temp
		f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", &os.PathError{Op: "create", Path: rel, Err: syscall.EEXIST}
}

// writeTemp writes content into a new temp file beside rel, gives it meta,
// and fsyncs it. On failure the temp file is removed.
func writeTemp(r *os.Root, rel string, content []byte, meta fileMeta) (string, error) {
	f, name, err := createTemp(r, rel)
	if err != nil {
		return "", err
	}
	err = fillFile(f, content, meta)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = r.Remove(name)
		return "", err
	}
	return name, nil
}

// linkTemp creates a symbolic link to target beside rel, under a temp
// name, for a rename over rel (an undo putting a removed link back). It
// gets the owner uid:gid when permitted (-1: as created); a link has no
// mode of its own, and symlink(2) never opens or follows anything.
func linkTemp(r *os.Root, rel, target string, uid, gid int) (string, error) {
	for range 4 {
		name := siblingName(rel, randomTag(), "tmp")
		noteTemp(r, name)
		err := symlinkOwned(r, target, name, uid, gid)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		return name, nil
	}
	return "", &os.PathError{Op: "symlink", Path: rel, Err: syscall.EEXIST}
}

// symlinkOwned makes name a symbolic link to target owned by uid:gid
// (see lchownLike); a link it made but could not give away is removed.
func symlinkOwned(r *os.Root, target, name string, uid, gid int) error {
	if err := r.Symlink(target, name); err != nil {
		return err
	}
	if err := lchownLike(r, name, uid, gid); err != nil {
		_ = r.Remove(name)
		return err
	}
	return nil
}

// lchownLike is chownLike for the symbolic link name itself.
func lchownLike(r *os.Root, name string, uid, gid int) error {
	if uid < 0 {
		return nil
	}
	fi, err := r.Lstat(name)
	if err != nil {
		return err
	}
	cu, cg, _ := fileOwner(fi)
	if cu == uid && cg == gid {
		return nil
	}
	err = r.Lchown(name, uid, gid)
	if errors.Is(err, syscall.EPERM) && cg != gid {
		err = r.Lchown(name, -1, gid)
	}
	if errors.Is(err, syscall.EPERM) {
		return nil
	}
	return err
}

// fillFile writes content and metadata into a fresh file and fsyncs it.
// The owner is set before the mode because chown clears setuid bits.
func fillFile(f *os.File, content []byte, meta fileMeta) error {
	if _, err := f.Write(content); err != nil {
		return err
	}
	return finishFile(f, meta)
}

func finishFile(f *os.File, meta fileMeta) error {
	if meta.uid >= 0 {
		if err := chownLike(f, meta.uid, meta.gid); err != nil {
			return err
		}
	}
	if meta.xattrSrc != nil {
		if err := copyXattrs(meta.xattrSrc, f); err != nil {
			return err
		}
	}
	if err := f.Chmod(meta.mode & permBits); err != nil {
		return err
	}
	return f.Sync()
}

// chownLike gives f the owner uid:gid when it differs. Only root may give
// a file away, so EPERM is expected and ignored for everyone else (who
// may still be able to keep the group).
func chownLike(f *os.File, uid, gid int) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	cu, cg, _ := fileOwner(fi)
	if cu == uid && cg == gid {
		return nil
	}
	err = f.Chown(uid, gid)
	if errors.Is(err, syscall.EPERM) && cg != gid {
		err = f.Chown(-1, gid)
	}
	if errors.Is(err, syscall.EPERM) {
		return nil
	}
	return err
}

// rewriteInPlace replaces the content of the regular file rel without
// replacing the file, so every hard link keeps seeing it. Space for growth
// is reserved first, so ENOSPC or EDQUOT appear before any existing byte
// changes; the caller holds a backup for everything later (EIO, a crash).
// The file keeps its mode and file capability, which the kernel takes
// from a file written to (see keepPrivs).
func rewriteInPlace(r *os.Root, rel string, content io.ReaderAt, size int64) error {
	f, err := r.OpenFile(rel, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &os.PathError{Op: "write", Path: rel, Err: syscall.EINVAL}
	}
	keep := privsOf(f, fi)
	old := fi.Size()
	if size > old {
		if err := growFile(f, old, content, size); err != nil {
			_ = f.Truncate(old)
			return err
		}
	}
	if _, err := io.Copy(io.NewOffsetWriter(f, 0), io.NewSectionReader(content, 0, size)); err != nil {
		return err
	}
	if size < old {
		if err := f.Truncate(size); err != nil {
			return err
		}
	}
	if err := keep.restore(f); err != nil {
		return err
	}
	return f.Sync()
}

// privs are what the kernel takes from a file when it is written to: its
// file capability (security.capability) always, its setuid and setgid
// bits when the writer lacks CAP_FSETID. A file replaced by rename gets
// them from fileMeta; one rewritten in place gets them back from here.
type privs struct {
	mode       fs.FileMode // permBits
	capability []byte      // nil: none
}

// capabilityXattr holds a file's capabilities (vfs_cap_data).
const capabilityXattr = "security.capability"

func privsOf(f *os.File, fi fs.FileInfo) privs {
	p := privs{mode: fi.Mode() & permBits}
	buf := make([]byte, 64) // vfs_cap_data is 24 bytes at most
	_ = osfd.With(f, func(fd int) error {
		n, err := unix.Fgetxattr(fd, capabilityXattr, buf)
		if err == nil {
			p.capability = buf[:n]
		}
		return err
	})
	return p
}

// restore gives f back what writing to it took. As with copyXattrs, what
// this process may not set (a capability without CAP_SETFCAP, a mode of
// a file it does not own) is left as the kernel made it.
func (p privs) restore(f *os.File) error {
	if p.capability != nil {
		err := osfd.With(f, func(fd int) error { return unix.Fsetxattr(fd, capabilityXattr, p.capability, 0) })
		if err != nil && !skippableXattrErr(err) {
			return &os.PathError{Op: "setxattr", Path: f.Name(), Err: err}
		}
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Mode()&permBits == p.mode {
		return nil
	}
	if err := f.Chmod(p.mode); err != nil && !errors.Is(err, syscall.EPERM) {
		return err
	}
	return nil
}

// growFile extends f from old to size bytes with real blocks: fallocate
// where the file system has it, else by writing the new tail first, which
// only adds bytes past the old end.
func growFile(f *os.File, old int64, content io.ReaderAt, size int64) error {
	err := reserve(f, old, size-old)
	if !errors.Is(err, errUnsupported) {
		return err
	}
	_, err = io.Copy(io.NewOffsetWriter(f, old), io.NewSectionReader(content, old, size-old))
	return err
}

var errUnsupported = errors.New("not supported")

// openDir opens directory dir for reading. O_DIRECTORY makes anything
// else fail with ENOTDIR before it is opened: a FIFO there would block
// the open until a writer came, and opening a device can act on it (a
// tape rewinds, a watchdog starts).
func openDir(r *os.Root, dir string) (*os.File, error) {
	return r.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
}

// syncDir fsyncs directory dir so the renames, creations and removals in it
// are durable. File systems that cannot fsync a directory (EINVAL) give no
// stronger guarantee to ask for.
func syncDir(r *os.Root, dir string) error {
	d, err := openDir(r, dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) {
		return nil
	}
	return err
}

// gone reports whether err says that name is not (or no longer) there
// for us: missing, under a non-directory, behind a link that leaves the
// root, or longer than the file system takes (a name it cannot hold, which
// fails a transaction's apply after its manifest named it). Cleanup and
// rollback treat all four alike, because nothing this package made can be
// behind such a path.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || isNotDir(err) || isEscape(err) || errors.Is(err, syscall.ENAMETOOLONG)
}

// removeIfExists removes name and treats a missing file as done.
func removeIfExists(r *os.Root, name string) error {
	if name == "" {
		return nil
	}
	err := r.Remove(name)
	if err == nil || gone(err) {
		return nil
	}
	return err
}

// exists reports whether name exists (without following a final link).
func exists(r *os.Root, name string) (bool, error) {
	_, err := r.Lstat(name)
	if err == nil {
		return true, nil
	}
	if gone(err) {
		return false, nil
	}
	return false, err
}
