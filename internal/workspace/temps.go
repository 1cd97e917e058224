package workspace

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Stray temp files. Writes, copies, moves, uploads and tree uploads stage
// their result beside the destination (".<name>.fsplane-<tag>.tmp",
// ".fsplane-upload-<tag>.part", ".fsplane-tree-<tag>.tmp") and rename it
// into place, so a crash never tears a file — but it can leave the staged
// copy behind, where it would show up in a person's `git status`.
//
// So each Workspace records the temps it creates in a log of its own in
// the state directory (temps/<tag>.log), which it holds an exclusive flock
// on for as long as it is open. Open sweeps the logs whose flock it can
// take — their writer is gone, however it ended — removing every recorded
// path that still exists and still has a temp's name, then the log. A
// clean Close removes the log once its temps are gone.
//
// The log is written without fsync: it survives a process crash (the page
// cache does), not always a power loss, where a stray can remain. A
// workspace opens the recorded root by its path to sweep it, confined to
// it like every access, and only ever removes names of the shapes above,
// never a .bak (a move's backup link may be the only name left of a file).
// Transaction temps are also the journal's business; Open recovers
// transactions before it sweeps.

// tempName matches the names of the staged files and directories a sweep
// may remove.
var tempName = regexp.MustCompile(`^(\..*\.fsplane-[0-9a-f]{16}\.tmp|\.fsplane-upload-[0-9a-f]{16}\.part|\.fsplane-tree-[0-9a-f]{16}\.tmp)$`)

// stagingName matches the names of every entry fsplane stages beside a
// destination: the temps above and a replace's or a move's backup
// (".<name>.fsplane-<tag>.bak").
var stagingName = regexp.MustCompile(`^(\..*\.fsplane-[0-9a-f]{16}\.(tmp|bak)|\.fsplane-upload-[0-9a-f]{16}\.part|\.fsplane-tree-[0-9a-f]{16}\.tmp)$`)

// IsStagingName reports whether name, one path component, is the name of
// an entry fsplane stages beside a destination and renames into place
// (or removes) itself: never a user's file. Watchers leave them out.
func IsStagingName(name string) bool {
	return strings.Contains(name, ".fsplane-") && stagingName.MatchString(name)
}

// tempLogs maps each root a workspace opened to its log, so the write
// primitives, which are given only an *os.Root, record their temps
// without threading the workspace through every call.
var tempLogs sync.Map // *os.Root → *tempLog

// noteTemp records that rel, inside r, is a temp this process is about
// to create, or created. Callers note a name before they create it, so a
// crash between the two leaves nothing unrecorded; entries younger than
// tempGrace survive compaction even when the path does not exist yet. A
// root without a log (a test's bare *os.Root) records nothing.
func noteTemp(r *os.Root, rel string) {
	if l, ok := tempLogs.Load(r); ok {
		l.(*tempLog).note(r, rel)
	}
}

const (
	tempCompactMin = 1024        // entries before the first compaction
	tempGrace      = time.Minute // an entry this young is kept by compaction
)

// tempLog is one workspace's record of its temps. It is safe for
// concurrent use.
type tempLog struct {
	mu      sync.Mutex
	f       *os.File // flocked while the workspace is open; nil once closed
	state   *os.Root
	name    string // in state
	entries []tempEntry
	compact int // compact when entries reaches this
}

type tempEntry struct {
	root *os.Root
	rel  string
	at   time.Time
}

func encodeTemp(b []byte, rootPath, rel string) []byte {
	b = append(b, rootPath...)
	b = append(b, 0)
	b = append(b, rel...)
	return append(b, 0)
}

// openTempLog creates and locks a new log in state.
func openTempLog(state *os.Root) (*tempLog, error) {
	if err := state.MkdirAll(tempsDir, 0o700); err != nil {
		return nil, err
	}
	for range 4 {
		name := path.Join(tempsDir, randomTag()+".log")
		f, err := state.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			_ = state.Remove(name)
			return nil, err
		}
		return &tempLog{f: f, state: state, name: name, compact: tempCompactMin}, nil
	}
	return nil, &os.PathError{Op: "create", Path: tempsDir, Err: unix.EEXIST}
}

func (l *tempLog) note(r *os.Root, rel string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	// Best effort: a failed write costs only the chance to sweep it.
	_, _ = l.f.Write(encodeTemp(nil, r.Name(), rel))
	l.entries = append(l.entries, tempEntry{root: r, rel: rel, at: time.Now()})
	if len(l.entries) >= l.compact {
		l.compactLocked()
		l.compact = max(tempCompactMin, 2*len(l.entries))
	}
}

// compactLocked drops the entries whose temp is gone (renamed into place
// or removed) and rewrites the log with the rest.
func (l *tempLog) compactLocked() {
	kept := l.entries[:0]
	var b []byte
	now := time.Now()
	for _, e := range l.entries {
		if _, err := e.root.Lstat(e.rel); err == nil || now.Sub(e.at) < tempGrace {
			kept = append(kept, e)
			b = encodeTemp(b, e.root.Name(), e.rel)
		}
	}
	clear(l.entries[len(kept):])
	l.entries = kept
	if _, err := l.f.WriteAt(b, 0); err == nil {
		_ = l.f.Truncate(int64(len(b)))
	}
	_, _ = l.f.Seek(int64(len(b)), io.SeekStart)
}

// close compacts the log and removes it when no temp is left; otherwise
// it stays for the next Open to sweep. It releases the flock either way.
func (l *tempLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	for i := range l.entries {
		l.entries[i].at = time.Time{} // no grace: keep only temps that exist
	}
	l.compactLocked()
	if len(l.entries) == 0 {
		_ = l.state.Remove(l.name)
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// sweepTemps removes the temps recorded in the logs of workspaces that are
// gone, then their logs. roots are this workspace's, reused when a log
// names one of them. A temp directory holding a directory that kept
// describes (see Workspace.kept) is left alone. It is best effort: what
// cannot be removed stays, and so does its log.
func sweepTemps(state *os.Root, roots []*wsRoot, kept func(fs.FileInfo) string) {
	d, err := state.Open(tempsDir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	opened := map[string]*os.Root{}
	defer func() {
		for _, r := range opened {
			r.Close()
		}
	}()
	rootFor := func(p string) *os.Root {
		for _, r := range roots {
			if r.path == p {
				return r.root
			}
		}
		if r, ok := opened[p]; ok {
			return r
		}
		r, err := os.OpenRoot(p)
		if err != nil {
			r = nil
		}
		opened[p] = r
		return r
	}
	for _, n := range names {
		if path.Ext(n) != ".log" {
			continue
		}
		name := path.Join(tempsDir, n)
		f, err := state.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if flock(f, unix.LOCK_EX|unix.LOCK_NB) != nil { // its workspace is open
			f.Close()
			continue
		}
		b, err := io.ReadAll(f)
		clean := err == nil
		for len(b) > 0 && clean {
			i := bytes.IndexByte(b, 0)
			j := bytes.IndexByte(b[i+1:], 0)
			if i < 0 || j < 0 {
				break // a record cut short by a crash
			}
			rootPath, rel := string(b[:i]), string(b[i+1:i+1+j])
			b = b[i+1+j+1:]
			if !removeTemp(rootFor(rootPath), rel, kept) {
				clean = false
			}
		}
		if clean {
			_ = state.Remove(name)
		}
		f.Close()
	}
}

// removeTemp removes rel from r if it has a temp's name, and reports
// whether it is gone. A directory is removed only when it holds nothing
// kept describes.
func removeTemp(r *os.Root, rel string, kept func(fs.FileInfo) string) bool {
	if r == nil || !tempName.MatchString(path.Base(rel)) {
		return true // nothing this sweep may remove
	}
	fi, err := r.Lstat(rel)
	switch {
	case gone(err):
		return true
	case err != nil:
		return false
	case fi.IsDir():
		if _, what, err := keptIn(r, rel, kept); err != nil || what != "" {
			return false
		}
		return removeOwnTree(r, rel) == nil
	}
	return removeIfExists(r, rel) == nil
}
