package workspace

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path"
	"strconv"

	"github.com/fsplane/fsplane/internal/fserr"
)

// Manifest states. Anything but committed is rolled back by recovery.
const (
	statePending   = "pending"
	stateCommitted = "committed"
)

// manifest is the journal of one transaction, StateDir/tx/<ID>.json. It
// holds names, never content: the content is in the temps and backups
// beside the targets, on the same file system, so renames stay atomic.
type manifest struct {
	ID    string   `json:"id"`
	State string   `json:"state"`
	Files []txFile `json:"files"`
}

type txFile struct {
	Root        string   `json:"root"` // the root's configured absolute path
	Rel         string   `json:"rel"`
	Kind        kind     `json:"kind"`
	Temp        string   `json:"temp,omitempty"`   // new content, renamed over Rel
	Backup      string   `json:"backup,omitempty"` // the original, kept until the end
	Existed     bool     `json:"existed"`
	PrevVersion string   `json:"prev_version,omitempty"`
	NewVersion  string   `json:"new_version,omitempty"`
	Dirs        []string `json:"dirs,omitempty"` // created parents, outermost first
	// Link is the target of the symbolic link the change puts at Rel
	// (an undo bringing a removed link back): recovery removes a link
	// there only when it still points to Link.
	Link string `json:"link,omitempty"`
}

func manifestName(id string) string { return path.Join(txDir, id+".json") }

// executeTx runs the transaction protocol documented on Commit.
func (w *Workspace) executeTx(op, id string, pl plan) error {
	return w.executeTxWith(op, id, pl, prepareTx)
}

// executeTxWith is executeTx with prepare making each file's parents,
// temp and backup (step 2). A temp already set in the plan is kept: a
// tree merge's new content is staged before the transaction begins (see
// TreeWriter.Commit).
func (w *Workspace) executeTxWith(op, id string, pl plan, prepare func(*planned) error) error {
	m := &manifest{ID: id, State: statePending}
	for _, p := range pl {
		rel := p.res.Rel
		switch p.kind {
		case kindReplace, kindCreate:
			if p.temp == "" {
				p.temp = siblingName(rel, randomTag(), "tmp")
			}
		}
		switch p.kind {
		case kindReplace, kindDelete, kindInPlace:
			// A tag of its own, not the transaction's: siblingName keeps
			// only the first maxBaseInName bytes of a name, so two long
			// names in one directory would share a backup, and a rollback
			// would restore one file from the other's (or not at all).
			p.backup = siblingName(rel, randomTag(), "bak")
		}
		m.Files = append(m.Files, txFile{
			Root: p.res.r.path, Rel: rel, Kind: p.kind, Temp: p.temp, Backup: p.backup,
			Existed: p.existed, PrevVersion: p.prevVersion, NewVersion: p.newVersion, Dirs: p.dirs, Link: p.newLink,
		})
	}
	crash := func(step string, i int) bool {
		if w.hooks.crashAt == nil {
			return false
		}
		if i >= 0 {
			step += "/" + strconv.Itoa(i)
		}
		return w.hooks.crashAt(step)
	}
	if _, err := w.writeManifest(m); err != nil {
		// Even when only the directory fsync failed, nothing else exists
		// yet: the manifest alone is harmless to roll back.
		_ = w.rollback(m)
		return stateErr(op, w.stateDir, err)
	}
	if crash("manifest", -1) {
		return errCrashed
	}
	// fail rolls back and returns cause; if the rollback itself fails the
	// manifest stays, and the next recovery (before the next mutation)
	// finishes it.
	fail := func(p *planned, cause error) error {
		e := dirRefusal(osErr(op, p.req.Path, cause), p.res.r.root, p.res.r.path, p.res.Rel)
		if err := w.rollback(m); err != nil {
			e.Hint = "the other files of this change could not all be restored yet; that is retried before the next change, which is refused until it succeeds"
		}
		return e
	}
	for i, p := range pl {
		if err := prepare(p); err != nil {
			return fail(p, err)
		}
		if crash("prepare", i) {
			return errCrashed
		}
	}
	for i, p := range pl {
		if w.hooks.beforeApply != nil {
			if err := w.hooks.beforeApply(i); err != nil {
				return fail(p, err)
			}
		}
		if p.kind != kindMkdir { // its directories were made in prepare
			if err := applyOne(p.res.r.root, p); err != nil {
				return fail(p, err)
			}
		}
		if crash("apply", i) {
			return errCrashed
		}
	}
	synced := map[dirKey]bool{}
	for _, p := range pl {
		for _, d := range touchedDirs(p) {
			k := dirKey{p.res.r.root, d}
			if synced[k] {
				continue
			}
			synced[k] = true
			if err := syncDir(p.res.r.root, d); err != nil {
				return fail(p, err)
			}
		}
	}
	if crash("synced", -1) {
		return errCrashed
	}
	m.State = stateCommitted
	// Once the committed manifest is renamed into place the transaction is
	// committed whatever follows: a rollback now could be cut short by a
	// crash and then "finished" by recovery, leaving a mix. Only a failure
	// before the rename rolls back.
	if renamed, err := w.writeManifest(m); err != nil && !renamed {
		m.State = statePending
		e := stateErr(op, w.stateDir, err)
		if rerr := w.rollback(m); rerr != nil {
			e.Hint = "the files of this change could not all be restored yet; that is retried before the next change, which is refused until it succeeds"
		}
		return e
	}
	if crash("committed", -1) {
		return errCrashed
	}
	// Committed. A failing cleanup leaves the manifest for the next
	// recovery.
	_ = w.finish(m)
	return nil
}

// prepareTx creates p's parent directories, temp file and backup.
func prepareTx(p *planned) error {
	root := p.res.r.root
	if err := makeChain(root, p.dirs, p.owner); err != nil {
		return err
	}
	if p.temp != "" && p.newLink != "" {
		if err := symlinkOwned(root, p.newLink, p.temp, p.uid, p.gid); err != nil {
			return err
		}
	} else if p.temp != "" {
		f, err := root.OpenFile(p.temp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		err = fillFile(f, p.req.Content, p.meta())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return backupTx(p)
}

// backupTx makes the backup of p's current file, if its kind needs one.
// p.orig may be nil (a tree merge keeps no file open per entry): the file
// is then opened only when a copy is needed.
func backupTx(p *planned) error {
	root, rel := p.res.r.root, p.res.Rel
	switch p.kind {
	case kindReplace, kindDelete:
		// A hard link costs no space and keeps the very inode (mode, owner,
		// xattrs, other links); linkat(2) links a symbolic link itself.
		// File systems without links get a copy.
		lerr := linkBackup(root, rel, p.backup)
		if lerr == nil || isNoSpace(lerr) {
			return lerr
		}
		if p.prevLink != "" {
			// A new link to the same target is a complete copy the
			// moment it exists.
			return symlinkOwned(root, p.prevLink, p.backup, p.uid, p.gid)
		}
		meta := p.origMeta()
		if p.orig == nil {
			f, _, err := openRegular(root, rel, "", rel)
			if err != nil {
				return lerr // a special file cannot be copied
			}
			defer f.Close()
			meta.xattrSrc = f
		}
		// The copy gets the backup's name only once complete: recovery
		// renames a backup over the target, and a copy cut short by a
		// crash must never be one.
		tmp := siblingName(rel, randomTag(), "tmp")
		noteTemp(root, tmp)
		if _, err := copyVerified(root, meta.xattrSrc, tmp, meta); err != nil {
			return err
		}
		if err := root.Rename(tmp, p.backup); err != nil {
			_ = root.Remove(tmp)
			return err
		}
	case kindInPlace:
		v, err := copyVerified(root, p.orig, p.backup, p.origMeta())
		if err != nil {
			return err
		}
		if v != p.prevVersion {
			// Changed by someone else since it was validated; recovery
			// relies on a backup that matches PrevVersion.
			return fserr.New(fserr.StaleVersion, "", "", "%s changed while it was being committed", p.req.Path).
				WithHint("re-read the file")
		}
	}
	return nil
}

// linkBackup makes a transaction's backup link; tests replace it to take
// the copy path of file systems without hard links.
var linkBackup = func(root *os.Root, oldname, newname string) error { return root.Link(oldname, newname) }

// copyVerified copies src into a new file dst (O_EXCL) with meta, fsyncs
// it, and returns the version of the bytes copied.
func copyVerified(root *os.Root, src *os.File, dst string, meta fileMeta) (string, error) {
	h := NewVersionHash()
	f, err := root.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(io.MultiWriter(f, h), io.NewSectionReader(src, 0, 1<<62))
	if err == nil {
		err = finishFile(f, meta)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(dst)
		return "", err
	}
	return h.Version(), nil
}

// writeManifest writes m durably: temp, fsync, rename, directory fsync.
// renamed reports whether the new manifest took the place of the old one,
// which matters when only the directory fsync failed.
func (w *Workspace) writeManifest(m *manifest) (renamed bool, err error) {
	data, err := json.MarshalIndent(m, "", "\t")
	if err != nil {
		return false, err
	}
	name := manifestName(m.ID)
	tmp := name + ".tmp"
	f, err := w.state.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return false, err
	}
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.state.Rename(tmp, name)
	}
	if err != nil {
		_ = w.state.Remove(tmp)
		return false, err
	}
	return true, syncDir(w.state, txDir)
}

// finish completes a committed transaction: backups and temps go, then
// the manifest. It is idempotent, so recovery may repeat it.
func (w *Workspace) finish(m *manifest) error {
	return w.settleFiles(m, func(root *os.Root, f txFile, touched func(string)) error {
		touched(path.Dir(f.Rel))
		return errors.Join(removeIfExists(root, f.Temp), removeIfExists(root, f.Backup))
	})
}

// dirKey names a directory of a root, to fsync each directory once.
type dirKey struct {
	root *os.Root
	dir  string
}
