package workspace

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// A move across file systems that replaces a destination keeps the old
// destination as a backup beside it (a hard link, or the file itself
// renamed aside) until the source is gone. A crash in between used to leave
// that backup for good — and, renamed aside, the only name of the old
// destination. So the move writes a record first (txDir/<id>.move, synced)
// and removes it when done; recovery settles what a crash left by what is
// on disk: with the source still there the move did not happen, so the
// backup goes back over the destination; with the source gone it did, and
// the backup goes.
type moveRecord struct {
	ID      string `json:"id"`
	SrcRoot string `json:"src_root"` // configured root paths, as manifests name them
	SrcRel  string `json:"src_rel"`
	DstRoot string `json:"dst_root"`
	DstRel  string `json:"dst_rel"`
	Backup  string `json:"backup"` // beside DstRel
	// SrcDev and SrcIno identify the source: a file created at its path
	// after the move is not the source still being there.
	SrcDev uint64 `json:"src_dev"`
	SrcIno uint64 `json:"src_ino"`
	// SrcVersion is a regular file source's content: a freed inode number
	// may be handed to a new file at the same path.
	SrcVersion string `json:"src_version,omitempty"`
	// SrcLink is a symbolic link source's target: its copy at the
	// destination is known by it, as a file's is by its version (a
	// dangling link or one to a directory has none).
	SrcLink string `json:"src_link,omitempty"`
}

// sameKey reports whether fi is the file with device dev and inode ino.
func sameKey(fi fs.FileInfo, dev, ino uint64) bool {
	d, i := fileKey(fi)
	return d == dev && i == ino
}

// fileKey returns fi's device and inode numbers (zero where unknown).
func fileKey(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}

const moveSuffix = ".move"

// writeMoveRecord stores r durably.
func (w *Workspace) writeMoveRecord(r *moveRecord) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	name := path.Join(txDir, r.ID+moveSuffix)
	err = writeSynced(w.state, name, os.O_EXCL, data)
	if err == nil {
		err = syncDir(w.state, txDir)
	}
	if err != nil {
		_ = w.state.Remove(name)
	}
	return err
}

// dropMoveRecord removes r once the move is settled.
func (w *Workspace) dropMoveRecord(r *moveRecord) {
	_ = w.state.Remove(path.Join(txDir, r.ID+moveSuffix))
}

// recoverMoves settles the moves a crash interrupted (see moveRecord),
// given the names in txDir. A record naming a root this workspace lacks is
// left for one that has it.
func (w *Workspace) recoverMoves(names []string) error {
	for _, name := range names {
		if !strings.HasSuffix(name, moveSuffix) {
			continue
		}
		data, err := w.state.ReadFile(path.Join(txDir, name))
		if err != nil {
			return err
		}
		var r moveRecord
		if json.Unmarshal(data, &r) != nil || r.ID+moveSuffix != name || r.Backup == "" {
			// Cut short before its sync: the move had not begun.
			_ = w.state.Remove(path.Join(txDir, name))
			continue
		}
		src, dst := w.rootAt(r.SrcRoot), w.rootAt(r.DstRoot)
		if src == nil || dst == nil {
			// Left for a workspace with both roots; meanwhile the paths
			// of it here are not to be changed (see refuseBlocked).
			w.blockMove(&r)
			continue
		}
		if err := settleMove(src, dst, &r); err != nil {
			// Not fatal for the workspace: its two paths stay blocked,
			// and a change to them says what to do.
			w.blockMove(&r)
			continue
		}
		w.dropMoveRecord(&r)
	}
	return nil
}

func settleMove(src, dst *os.Root, r *moveRecord) error {
	backup, err := exists(dst, r.Backup)
	if err != nil || !backup {
		return err // nothing to settle: never made, or already settled
	}
	fi, err := src.Lstat(r.SrcRel)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	still := err == nil && sameKey(fi, r.SrcDev, r.SrcIno)
	if still && r.SrcVersion != "" {
		v, err := fileVersion(src, r.SrcRel)
		if err != nil {
			return err
		}
		still = v == r.SrcVersion
	}
	if !still {
		// The source is gone (or another file now): the move happened,
		// if the destination holds the copy. Missing — killed between
		// renaming the old destination aside and installing the copy —
		// the backup is its only name and goes back; holding something
		// else, the backup stays for a person to look at.
		copied, present, err := holdsCopy(dst, r)
		switch {
		case err != nil:
			return err
		case copied:
			return removeIfExists(dst, r.Backup)
		case present:
			return nil
		}
	}
	// The move did not happen: the backup (a link to the old
	// destination, or the old destination itself) goes back over whatever
	// the destination holds; when it is a link to what the destination
	// still is, the rename does nothing and the extra name goes.
	if err := dst.Rename(r.Backup, r.DstRel); err != nil {
		return err
	}
	if err := removeIfExists(dst, r.Backup); err != nil {
		return err
	}
	return syncDir(dst, path.Dir(r.DstRel))
}

// holdsCopy reports whether r's destination holds the moved source's
// copy, and whether it holds anything. A link source's copy is a link
// with its target, never followed: a dangling one has no content to
// compare, and one to a directory cannot be read as a file.
func holdsCopy(dst *os.Root, r *moveRecord) (copied, present bool, err error) {
	if r.SrcLink != "" {
		fi, err := dst.Lstat(r.DstRel)
		switch {
		case gone(err):
			return false, false, nil
		case err != nil:
			return false, false, err
		case fi.Mode()&fs.ModeSymlink == 0:
			return false, true, nil
		}
		target, err := dst.Readlink(r.DstRel)
		return err == nil && target == r.SrcLink, true, err
	}
	dv, err := fileVersion(dst, r.DstRel)
	if err != nil || dv == "" {
		return false, false, err
	}
	return r.SrcVersion == "" || dv == r.SrcVersion, true, nil
}

// blockMove blocks the paths of move record r that lie in w's roots.
func (w *Workspace) blockMove(r *moveRecord) {
	id := r.ID + " (a move; the replaced " + r.DstRel + " is kept as " + r.Backup + " beside it)"
	w.blockPath(r.SrcRoot, r.SrcRel, id)
	w.blockPath(r.DstRoot, r.DstRel, id)
}
