package workspace

import (
	"encoding/json"
	"errors"
	"os"
	"path"
	"slices"
	"strings"
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

// dirNames returns the names in dir of root, sorted.
func dirNames(root *os.Root, dir string) ([]string, error) {
	d, err := root.Open(dir)
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	slices.Sort(names)
	return names, err
}

// dropMoveRecord removes r once the move is settled.
func (w *Workspace) dropMoveRecord(r *moveRecord) {
	_ = w.state.Remove(path.Join(txDir, r.ID+moveSuffix))
}

// recoverMoves settles the moves a crash interrupted (see moveRecord). A
// record naming a root this workspace lacks is left for one that has it.
func (w *Workspace) recoverMoves() error {
	names, err := dirNames(w.state, txDir)
	if err != nil {
		return err
	}
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
			continue
		}
		if err := settleMove(src, dst, &r); err != nil {
			return err
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
	if _, err := src.Lstat(r.SrcRel); err == nil {
		// The source is still there: the move did not happen. The
		// backup (a link to the old destination, or the old destination
		// itself) goes back over whatever the destination holds.
		if err := dst.Rename(r.Backup, r.DstRel); err != nil {
			return err
		}
		return syncDir(dst, path.Dir(r.DstRel))
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return removeIfExists(dst, r.Backup)
}
