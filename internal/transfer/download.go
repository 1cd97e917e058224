package transfer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
	"github.com/fsplane/fsplane/internal/workspace"
)

// Policy is a download's change_policy.
type Policy string

// The change policies.
const (
	// Ignore serves the file opened even when its path is replaced
	// meanwhile: a replacement (fsplane's own writes rename a new file
	// over the path) leaves the opened file's bytes whole. Content
	// changed before the headers is served as it is then, without the
	// validators pinned at open. A file rewritten in place during the
	// transfer is cut short, as Abort cuts it, rather than sent as a
	// mix of two contents under a length and ETag that say complete.
	//
	// That guard reads through user space, so it is kept to the files
	// fsplane itself rewrites in place: those with several hard links
	// when the transfer starts (workspace keeps their links that way).
	// Every other file goes out through sendfile(2), which cannot be
	// guarded: the kernel sends page-cache pages by reference, so even
	// bytes it has reported sent can turn into later ones. Another
	// program that rewrites such a file in place (O_TRUNC, or writes
	// into it) while it downloads can still make it mix; Abort, whose
	// reads are all checked, is the policy for files written that way.
	Ignore Policy = "ignore"
	// Abort pins the file at open and refuses (409) or cuts the transfer
	// when it changes before or during it.
	Abort Policy = "abort"
)

// ParsePolicy parses a change_policy value; "" is Ignore.
func ParsePolicy(s string) (Policy, bool) {
	switch Policy(s) {
	case "", Ignore:
		return Ignore, true
	case Abort:
		return Abort, true
	}
	return "", false
}

// fileKey identifies a file's state: a change of content changes the
// ctime (and usually mtime and size); a replacement changes the inode.
type fileKey struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// nlinkOf returns fi's hard link count, 1 when the system gives none.
func nlinkOf(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

func keyOf(fi fs.FileInfo) fileKey {
	k := fileKey{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.dev, k.ino = uint64(st.Dev), uint64(st.Ino)
		k.ctime = ctimeOf(st)
	}
	return k
}

// racyMargin is how much older than the start of hashing a file's ctime
// must be for its version to be cached, when the file system keeps
// sub-second timestamps. They still advance in ticks (a few ms, 10 ms on
// exFAT); a change made in the tick the hash started could keep the same
// ctime, so such files are hashed again next time (git's "racy index"
// rule). See coarseMargin for whole-second timestamps.
const racyMargin = 50 * time.Millisecond

// coarseMargin replaces racyMargin for timestamps kept to the second
// (HFS+, ext4 with 128-byte inodes, many FUSE and SMB mounts) or to two
// seconds (FAT, exFAT): a same-size rewrite in the same tick keeps the
// whole key, so the tick must be over before the hash starts. Two seconds
// cover the coarsest tick however the file system rounds.
const coarseMargin = 2 * time.Second

// coarse reports whether k's timestamps look kept to whole seconds: its
// ctime has no sub-second part. The ctime decides because the kernel sets
// it, at the file system's resolution; an mtime can be set to anything
// (tar, touch -d), and whole-second ones are common on fine file systems.
// A fine ctime lands on a whole second once in 10⁹ changes, which costs
// only a second hash.
func coarse(k fileKey) bool { return k.ctime%int64(time.Second) == 0 }

// cacheable reports whether a version hashed from start on may be cached
// under k: only when k's ctime is older than start by more than the
// timestamps' tick, so that any later change gets another ctime, and
// with it another key.
func cacheable(k fileKey, start time.Time) bool {
	margin := racyMargin
	if coarse(k) {
		margin = coarseMargin
	}
	return start.Sub(time.Unix(0, k.ctime)) > margin
}

// VersionCache remembers content versions by file identity (device,
// inode, size, mtime, ctime), so a large file is hashed once, not at every
// download. It is safe for concurrent use.
type VersionCache struct {
	mu    sync.Mutex
	m     map[fileKey]string
	order []fileKey // ring, for eviction
	next  int

	hooks cacheHooks
}

// cacheHooks let tests act inside version. They are nil outside tests.
type cacheHooks struct {
	afterKey func()                    // the key is taken, nothing checked or hashed yet
	hashing  func(io.Reader) io.Reader // wraps what is hashed
}

// NewVersionCache returns a cache of at most size entries.
func NewVersionCache(size int) *VersionCache {
	return &VersionCache{m: make(map[fileKey]string, size), order: make([]fileKey, size)}
}

// version returns f's content version and whether f stayed unchanged
// while it was hashed, as fi describes it (false: no version describes
// the content, and the returned one is "").
func (c *VersionCache) version(f *os.File, fi fs.FileInfo) (string, bool, error) {
	k := keyOf(fi)
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return v, true, nil
	}
	if c.hooks.afterKey != nil {
		c.hooks.afterKey()
	}
	// fi may be old by now. A file that no longer matches it is not
	// hashed at all: the version could not describe fi, and a file being
	// appended to would be read for nothing.
	now, err := f.Stat()
	if err != nil {
		return "", false, err
	}
	if keyOf(now) != k {
		return "", false, nil
	}
	start := time.Now()
	// At most the size fi gives: growth meanwhile changes the key (its
	// size), checked below, and is never read.
	var r io.Reader = io.NewSectionReader(f, 0, fi.Size())
	if c.hooks.hashing != nil {
		r = c.hooks.hashing(r)
	}
	v, n, err := workspace.VersionOf(r)
	if err != nil {
		return "", false, err
	}
	after, err := f.Stat()
	if err != nil {
		return "", false, err
	}
	if n != fi.Size() || keyOf(after) != k {
		return "", false, nil
	}
	if cacheable(k, start) && len(c.order) > 0 {
		c.mu.Lock()
		if _, dup := c.m[k]; !dup {
			delete(c.m, c.order[c.next])
			c.order[c.next] = k
			c.next = (c.next + 1) % len(c.order)
			c.m[k] = v
		}
		c.mu.Unlock()
	}
	return v, true, nil
}

// FileVersion returns the content version of f, an open regular file,
// hashing it only when the cache holds no version for its current state;
// "" when f changed while it was hashed (no version describes it). It
// also returns f's state before hashing, the one the version is for.
func (c *VersionCache) FileVersion(f *os.File) (string, fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", nil, err
	}
	v, stable, err := c.version(f, fi)
	if err != nil || !stable {
		return "", fi, err
	}
	return v, fi, nil
}

// Source is an opened file about to be downloaded.
type Source struct {
	file    *os.File
	info    fs.FileInfo
	path    string
	key     fileKey
	version string // "" when the file changed while it was hashed
	stable  bool
	// same reports whether the path still names the opened file.
	same func() bool
	// afterPin runs once the file is pinned (tests).
	afterPin func()
	// mem, when not nil, is the whole file read at open, served instead
	// of file (which is then nil; see Open).
	mem []byte

	// RangeRule, when set before Serve, may rewrite the request's Range
	// header once the file's size and validators are known (as
	// ServeContent will see them: version "" means no ETag, a zero time
	// no Last-Modified), so that the ranges answered follow the caller's
	// rules rather than ServeContent's own.
	RangeRule func(h http.Header, size int64, version string, modTime time.Time)
}

// MemLimit bounds a file served from memory (see Open): the read route's
// limit, so what can be read can be downloaded.
const MemLimit = workspace.TextLimit

// Open pins f, a regular file the caller opened at path (absolute, for
// names and messages), and computes its version through cache. same, when
// not nil, tells whether the path still names the same file (an atomic
// replacement is a change for Abort). The Source owns f.
//
// A file whose size cannot be trusted is read whole at once, up to
// MemLimit (too_large above it), and served from memory, so that
// Content-Length and ranges describe the bytes sent: one on procfs or
// sysfs, whose files are generated when read (stat says 0 bytes, or a
// page), or one that cannot seek to its end (ServeContent must). Such
// a snapshot is its own pinned state: no change can reach it, whatever
// the policy.
func Open(f *os.File, path string, cache *VersionCache, same func() bool) (*Source, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fserr.FromOS("download", path, err)
	}
	if sizeSuspect(fi) && (pseudoFS(f) || !seekable(f)) {
		return openMem(f, fi, path, MemLimit)
	}
	v, stable, err := cache.version(f, fi)
	if err != nil {
		f.Close()
		return nil, fserr.FromOS("download", path, err)
	}
	s := &Source{file: f, info: fi, path: path, key: keyOf(fi), version: v, stable: stable, same: same}
	if !stable {
		s.version = ""
	}
	return s, nil
}

// sizeSuspect reports whether fi's size may not be its content's: what
// procfs (0) and sysfs (a page) report for generated files. Only such a
// file costs Open the statfs and seek that tell; any other is served as
// it stands.
func sizeSuspect(fi fs.FileInfo) bool {
	return fi.Size() == 0 || fi.Size() == int64(os.Getpagesize())
}

// seekable reports whether f can seek to its end, as ServeContent does
// to learn the size. A failed lseek leaves the offset at 0, for openMem;
// a successful one leaves it at the end, which does not matter: Serve
// seeks to the start, and the other readers use pread.
func seekable(f *os.File) bool {
	_, err := f.Seek(0, io.SeekEnd)
	return err == nil
}

// openMem reads f from its start (it was just opened), at most limit
// bytes, and returns a Source serving those bytes. It closes f.
func openMem(f *os.File, fi fs.FileInfo, path string, limit int64) (*Source, error) {
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fserr.FromOS("download", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fserr.New(fserr.TooLarge, "download", path,
			"file exceeds the %d MiB limit of a file served from memory (its file system reports no true size, or it cannot seek)", limit>>20).
			WithHint("read a range of its lines instead")
	}
	return &Source{info: fi, path: path, key: keyOf(fi), version: workspace.Version(b), stable: true, mem: b}, nil
}

// intact reports whether fi, the pinned file's state now, still holds
// the content pinned at open: its key is the pinned one, or only the
// ctime moved, with the link count. Adding or removing a name changes
// the ctime and no byte; that is what a replacement of the path does to
// the file it replaces (rename unlinks it), which must not pass for a
// change of content where a replacement is ignored.
func (s *Source) intact(fi fs.FileInfo) bool { return intactSince(s.key, nlinkOf(s.info), fi) }

// intactSince reports whether fi, a file's state now, still holds the
// content of the state key, when the file had nlink names (see intact).
func intactSince(key fileKey, nlink uint64, fi fs.FileInfo) bool {
	k := keyOf(fi)
	if k == key {
		return true
	}
	k.ctime = key.ctime
	return k == key && nlinkOf(fi) != nlink
}

// Version returns the content version served as the ETag ("" when the
// file changed while it was hashed).
func (s *Source) Version() string { return s.version }

// Size returns the size pinned at open.
func (s *Source) Size() int64 {
	if s.mem != nil {
		return int64(len(s.mem))
	}
	return s.info.Size()
}

// Close closes the file.
func (s *Source) Close() error {
	if s.file == nil {
		return nil
	}
	return s.file.Close()
}

// changedErr says that, under change_policy=abort, the file changed
// before or during the transfer.
func changedErr(path string) *fserr.Error {
	return fserr.New(fserr.Conflict, "download", path, "File changed before or during download when change_policy=abort").
		WithHint("download again; pass change_policy=ignore to accept a file that is being written")
}

// rewrittenErr says that, under change_policy=ignore, the file was
// rewritten in place during the transfer, which was cut.
func rewrittenErr(path string) *fserr.Error {
	return fserr.New(fserr.Conflict, "download", path, "File was rewritten in place during download; the transfer was cut rather than mix two contents").
		WithHint("download again")
}

// Serve answers r (GET or HEAD) with the file's bytes through
// http.ServeContent: a strong ETag (the content version), Last-Modified,
// a single Range (206; 416 when unsatisfiable), If-Range, If-Match,
// If-None-Match.
//
// With Abort, every read is checked against the state pinned at open
// (fstat after each read, the path every few milliseconds) and a
// whole-file transfer is hashed as it goes; its last bytes are released
// only when the hash equals the pinned version. A change found before
// the headers is returned as a conflict (409) with started false; a
// change found later cuts the connection short of Content-Length, so the
// client cannot take the body for complete, and is returned with started
// true. Serve writes nothing when it returns started false.
//
// With Ignore (see it for why), a file with one link goes to
// ServeContent as the *os.File itself, so the body goes out through
// sendfile(2) when w allows it (plain TCP, no wrapper hiding
// io.ReaderFrom). A file with several links is read as Abort reads it,
// except that a replacement of its path is no change: a rewrite in place
// cuts the transfer and is returned with started true.
func (s *Source) Serve(w http.ResponseWriter, r *http.Request, policy Policy) (started bool, err error) {
	if s.afterPin != nil {
		s.afterPin()
	}
	h := w.Header()
	if s.mem != nil {
		// No Last-Modified: a generated file's times say nothing of its
		// content, and If-Range on a date could splice two contents.
		setHeaders(h, s.version, s.path)
		s.applyRangeRule(r, int64(len(s.mem)), s.version, time.Time{})
		http.ServeContent(w, r, filepath.Base(s.path), time.Time{}, bytes.NewReader(s.mem))
		return true, nil
	}
	version, modtime, size := s.version, s.info.ModTime(), s.info.Size()
	fi, err := s.file.Stat()
	changed := err != nil || !s.intact(fi)
	switch {
	case policy == Abort && (changed || !s.stable || (s.same != nil && !s.same())):
		return false, changedErr(s.path)
	case changed:
		// Ignore serves the file as it is now: the validators pinned at
		// open describe content that is gone, and sent or compared with
		// it they would make a client keep a stale copy (304) or splice
		// new bytes onto old ones (If-Range). Serve it without an ETag,
		// under its current mtime.
		version, modtime = "", time.Time{}
		if err == nil {
			modtime, size = fi.ModTime(), fi.Size()
		}
	}
	setHeaders(h, version, s.path)
	var content io.ReadSeeker = s.file
	var g *guard
	switch {
	case policy == Abort:
		g = &guard{src: s, h: workspace.NewVersionHash()}
		content = g
	case err == nil && nlinkOf(fi) > 1:
		pinned := *s
		pinned.same = nil
		if changed {
			pinned.info, pinned.key, pinned.version = fi, keyOf(fi), ""
		}
		g = &guard{src: &pinned, h: workspace.NewVersionHash(), inPlace: true}
		content = g
	default:
		if _, err := s.file.Seek(0, io.SeekStart); err != nil {
			return false, fserr.FromOS("download", s.path, err)
		}
	}
	s.applyRangeRule(r, size, version, modtime)
	http.ServeContent(w, r, filepath.Base(s.path), modtime, content)
	if g != nil {
		if err := g.failure(); err != nil {
			return true, err
		}
	}
	return true, nil
}

// applyRangeRule applies RangeRule, if any, to a request with a Range.
func (s *Source) applyRangeRule(r *http.Request, size int64, version string, modTime time.Time) {
	if s.RangeRule != nil && r.Header.Get("Range") != "" {
		s.RangeRule(r.Header, size, version, modTime)
	}
}

// setHeaders sets a download's headers other than ServeContent's.
func setHeaders(h http.Header, version, path string) {
	h.Set("Content-Type", "application/octet-stream")
	if version != "" {
		h.Set("ETag", `"`+version+`"`)
	}
	if cd := mime.FormatMediaType("attachment", map[string]string{"filename": filepath.Base(path)}); cd != "" {
		h.Set("Content-Disposition", cd)
	}
}

// guard is a view of the pinned file that fails as soon as the file is
// seen to change: the Abort policy's reader, and Ignore's for a file
// with several links.
type guard struct {
	src *Source
	off int64
	// hashing: reading the whole file from offset 0, in order, to check
	// it against the pinned version (when there is one).
	hashing  bool
	inPlace  bool // Ignore's: the failure is rewrittenErr
	h        *workspace.VersionHash
	lastPath time.Time
	// err is the first failure. For a multi-range request ServeContent
	// reads through the guard in a goroutine of its own, which can still
	// be reading when ServeContent returns (the client went away), so err
	// is kept under mu: Serve reads it through failure.
	mu  sync.Mutex
	err error
}

// failure returns the guard's error, if any.
func (g *guard) failure() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// setErr records err as the guard's error and returns it.
func (g *guard) setErr(err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.err = err
	return err
}

func (g *guard) Seek(offset int64, whence int) (int64, error) {
	size := g.src.info.Size()
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += g.off
	case io.SeekEnd:
		offset += size
	default:
		return 0, errors.New("transfer: invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("transfer: negative position")
	}
	g.off = offset
	g.hashing = offset == 0 && g.src.version != ""
	g.h.Reset()
	return offset, nil
}

func (g *guard) fail() (int, error) {
	if g.inPlace {
		return 0, g.setErr(rewrittenErr(g.src.path))
	}
	return 0, g.setErr(changedErr(g.src.path))
}

func (g *guard) Read(p []byte) (int, error) {
	if err := g.failure(); err != nil {
		return 0, err
	}
	size := g.src.info.Size()
	if g.off >= size {
		return 0, io.EOF
	}
	if rest := size - g.off; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := g.src.file.ReadAt(p, g.off)
	if err == io.EOF && n == len(p) {
		err = nil
	}
	if err != nil {
		if err == io.EOF {
			return g.fail() // shorter than pinned: truncated meanwhile
		}
		return 0, g.setErr(fmt.Errorf("reading %s: %w", g.src.path, err))
	}
	// Released only after a check that follows the read: a write that
	// began before the check changes the ctime.
	fi, serr := g.src.file.Stat()
	if serr != nil || !g.src.intact(fi) {
		return g.fail()
	}
	end := g.off + int64(n)
	if g.hashing {
		_, _ = g.h.Write(p[:n])
		if end == size {
			if g.h.Version() != g.src.version || (g.src.same != nil && !g.src.same()) {
				return g.fail()
			}
		}
	}
	if now := time.Now(); g.src.same != nil && now.Sub(g.lastPath) > 5*time.Millisecond {
		g.lastPath = now
		if !g.src.same() {
			return g.fail()
		}
	}
	g.off = end
	return n, nil
}
