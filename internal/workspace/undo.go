package workspace

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
)

// The undo journal lives in StateDir/undo: "log", an append-only file of
// JSON lines (add an entry, confirm one, drop one), and "blobs/<seq>", the
// previous content of each entry, unless it is small enough to be kept in
// the entry's log line (see defaultInlineMax). A blob is written and fsynced
// before the log line that refers to it, so a crash leaves at worst an
// orphan blob, removed by the next Open. Every process sharing the state directory
// appends to the same log under the state lock and re-reads what others
// appended before acting; the log is compacted when it is mostly dead
// records.
//
// A change's entries are added, pending, before the change is made, and
// confirmed (or dropped) after it (see prepareUndo): a crash between the
// change and its record can then no longer leave the change without undo,
// whose old content existed only in the crashed process's memory. A
// pending entry a crash left is settled by the next process that looks at
// the journal, from the file itself (see settlePending).

const (
	undoLog    = "undo/log"
	undoLogTmp = "undo/log.tmp"
	// defaultInlineMax is the largest previous content kept in its log line
	// rather than in a blob of its own: an edit of a small file then
	// costs one fsync for its undo record (the log's) instead of three
	// (blob, blob directory, log), and a tree merge of small files one per
	// batch instead of one per file. inlineBudget bounds the inline
	// content of the live entries, which the journal holds in memory and
	// every compaction rewrites; past it, contents go to blobs.
	defaultInlineMax = 4 << 10
	inlineBudget     = 8 << 20
	// defaultCompactAt is the log size from which compaction is
	// considered; it happens when at most a quarter of the log is live.
	defaultCompactAt = 1 << 20
)

// UndoResult reports an Undo.
type UndoResult struct {
	Path     Path
	Op       string // the operation undone, as recorded by Commit
	Restored bool   // the previous content was restored
	Deleted  bool   // the undone change created the file, so it was deleted
	Version  string // the version now on disk; "" when deleted
	// Replaced is the version the undo replaced (the one the undone
	// change left, which undo requires); "" when it re-created the file.
	Replaced string
	// Also lists the other files the same undo reverted: the other side
	// of a move.
	Also []UndoResult
	// AlreadyUndone: the file was already as the undo leaves it, because
	// an earlier undo of the same change was interrupted after restoring
	// it; its record was dropped and nothing else changed (Replaced is
	// "").
	AlreadyUndone bool
}

// undoEntry is the state of one file before one recorded change.
type undoEntry struct {
	Seq          int64       `json:"seq"`
	Key          string      `json:"key"` // the file's absolute path, links resolved
	Op           string      `json:"op"`
	Tx           string      `json:"tx,omitempty"`
	Time         time.Time   `json:"time"`
	Existed      bool        `json:"existed"`
	Mode         fs.FileMode `json:"mode,omitempty"`
	Size         int64       `json:"size,omitempty"`
	PrevVersion  string      `json:"prev_version,omitempty"`
	AfterExists  bool        `json:"after_exists"`
	AfterVersion string      `json:"after_version,omitempty"`
	// AfterMode is the permission bits the change left the file with,
	// when it wrote them itself (0: not recorded, as in entries written
	// before it was kept): a chmod since is later work, which undo must
	// not discard.
	AfterMode fs.FileMode `json:"after_mode,omitempty"`
	// Owner is the owner the file had (absent in entries written before
	// it was kept): an undo that re-creates the file gives it back.
	Owner *entryOwner `json:"owner,omitempty"`
	// AfterOwner is the owner the change left the file with, as it was
	// found once the change was made (nil: not known, as in entries
	// written before it was kept, or whose confirmation a crash lost): a
	// chown since is later work, which undo must not discard. It comes
	// with the confirm record (undoRecord.AfterOwner): the add record is
	// written before the change, when the owner the file will end up with
	// is not known (a chown fsplane may not make, a setgid directory).
	AfterOwner *entryOwner `json:"after_owner,omitempty"`
	// Dirs counts the file's innermost parent directories that the change
	// created along with it (a create only; 0 in entries written before
	// it was kept): undo of the create removes them again, deepest first,
	// each only while it is empty (see removeMadeDirs). A count, not
	// names: the record is keyed by the file's path, links resolved, so
	// its parents are the key's, and a path that no longer resolves to the
	// key finds no record.
	Dirs int `json:"dirs,omitempty"`
	// Group ties entries of one transaction that are undone together (see
	// Change.Group); GroupSize is how many changes it had.
	Group     string `json:"group,omitempty"`
	GroupSize int    `json:"group_size,omitempty"`
	// Link: the path was a symbolic link (removed, or replaced by a file,
	// through Change.Entry); the blob holds its target, and undo makes
	// the link again.
	Link bool `json:"link,omitempty"`
	// Inline: the previous content is Data, not a blob (see
	// defaultInlineMax).
	Inline bool   `json:"inline,omitempty"`
	Data   []byte `json:"data,omitempty"`
	// Pending: recorded before its change was made, and not confirmed
	// since. Such an entry is live (Undo checks the file anyway) until
	// settlePending confirms or drops it.
	Pending bool `json:"pending,omitempty"`

	// In memory only (encoding/json skips unexported fields):
	dropped bool  // a drop record was applied; see undoJournal.order
	line    int64 // the length of the log line that added it, newline included
}

type entryOwner struct {
	UID int `json:"uid"`
	GID int `json:"gid"`
}

type undoRecord struct {
	Next    int64      `json:"next,omitempty"` // lowest unused seq (compaction keeps it)
	Add     *undoEntry `json:"add,omitempty"`
	Confirm int64      `json:"confirm,omitempty"` // the pending entry's change was made
	Drop    int64      `json:"drop,omitempty"`
	// AfterOwner, with Confirm, is the owner the change left the file
	// with (undoEntry.AfterOwner).
	AfterOwner *entryOwner `json:"after_owner,omitempty"`
}

// undoJournal is the in-memory view of the log. It changes only by
// applying the log's lines (applyLine), whoever wrote them, so a reread
// after another process compacted the log rebuilds every index and counter
// below from scratch, and an append by another process adjusts them like
// one of ours. It is used only under the Workspace mutex and the state
// lock.
//
// Recording an entry costs the same however many entries the journal
// holds: entries are indexed by sequence number and by file, the totals
// the limits bound are running counts, evictions start from the oldest
// entry and visit only what they evict, and compaction is decided on a
// count of the live log's bytes before anything is encoded. Compaction
// itself is linear in the live entries but happens only once the log is
// four times their size, so it is amortised over the appends that made
// it so.
type undoJournal struct {
	state  *os.Root
	limits UndoLimits
	// order holds the entries in ascending Seq. A dropped entry stays in
	// place, marked, until it reaches either end (both ends are always
	// live) or the dropped ones are most of the slice (squeeze), so a
	// drop does not shift the slice.
	order []*undoEntry
	dead  int                     // dropped entries still in order
	bySeq map[int64]*undoEntry    // live entries
	byKey map[string][]*undoEntry // live entries per file, ascending Seq
	// over holds the files with more than limits.PerFile live entries:
	// only those and the files an add touches can need a per-file
	// eviction. It is empty unless a log written under a larger PerFile
	// (another process's limits) was read.
	over map[string]bool
	// pending holds the live entries still Pending.
	pending map[int64]*undoEntry
	// doomed holds the Seqs of evicted entries whose blobs wait for their
	// drop records to be fsynced (see confirm).
	doomed []int64
	// inlined is the sum of the live entries' inline Data, which
	// inlineBudget bounds.
	inlined int64
	// size is the sum of the live entries' Size, which TotalBytes bounds.
	size int64
	// liveLog is the bytes of the log lines that added the live entries:
	// about what a compacted log would hold.
	liveLog int64
	next    int64
	dev     uint64
	ino     uint64
	off     int64 // bytes of the log applied
	// compactAt is defaultCompactAt and inlineMax defaultInlineMax; not
	// meant to be changed, but changeable for tests.
	compactAt int64
	inlineMax int64
}

func newUndoJournal(state *os.Root, l UndoLimits) *undoJournal {
	j := &undoJournal{state: state, limits: l, compactAt: defaultCompactAt, inlineMax: defaultInlineMax}
	j.reset()
	return j
}

func (j *undoJournal) reset() {
	j.order, j.dead, j.size, j.liveLog, j.inlined = nil, 0, 0, 0, 0
	j.bySeq, j.byKey, j.over = map[int64]*undoEntry{}, map[string][]*undoEntry{}, map[string]bool{}
	j.pending = map[int64]*undoEntry{}
	j.next, j.dev, j.ino, j.off = 1, 0, 0, 0
}

// len is the number of live entries.
func (j *undoJournal) len() int { return len(j.bySeq) }

// live yields the live entries, oldest first. The journal must not change
// during the iteration.
func (j *undoJournal) live() iter.Seq[*undoEntry] {
	return func(yield func(*undoEntry) bool) {
		for _, e := range j.order {
			if !e.dropped && !yield(e) {
				return
			}
		}
	}
}

// forKey returns key's live entries, oldest first; the caller must not
// modify the slice.
func (j *undoJournal) forKey(key string) []*undoEntry { return j.byKey[key] }

// Undo reverts the newest recorded change of p. It refuses with conflict
// when the file is no longer as that change left it (content, existence,
// the permission bits the change wrote, or its owner and group), because
// restoring would discard the later change (a chmod or chown included);
// nothing is changed then. What the change itself did to the owner is
// undone with it: a file re-created or restored gets the owner it had
// before the change (a move over it had given it the moved file's).
// Undoing a create deletes the file, and then the parent directories that
// create made, while they are empty; otherwise the previous content and
// mode are restored with the same atomic machinery as Commit. The undo
// itself is not recorded, and the entry is consumed, so repeated Undo
// calls walk back through the file's history. A move (see Move) is
// reverted as a whole from either of its paths: the source comes back and
// the destination is removed or gets its overwritten content back, in one
// transaction, or nothing happens when either file changed since.
func (w *Workspace) Undo(p string) (*UndoResult, error) {
	const op = "undo"
	if err := w.checkOpen(op, p); err != nil {
		return nil, err
	}
	res, err := w.resolve(op, p)
	if err != nil {
		return nil, err
	}
	var out *UndoResult
	err = w.locked(op, p, func() error {
		if err := w.refuseBlocked(op, res); err != nil {
			return err
		}
		var err error
		out, err = w.undoLocked(op, p, res)
		return err
	})
	return out, err
}

// undoLocked is Undo for a caller that holds the locks.
func (w *Workspace) undoLocked(op, p string, res *resolved) (*UndoResult, error) {
	if err := w.freshJournal(); err != nil {
		return nil, stateErr(op, w.stateDir, err)
	}
	e := w.journal.newest(res.canonKey)
	if e == nil {
		return nil, fserr.New(fserr.BadRequest, op, p, "no undo history for %s", p).
			WithHint("nothing is recorded for this path: it was not changed through fsplane, its changes were already undone, or their records were evicted (or not kept: too large, a directory); restore it by hand")
	}
	// A move changed two files, and so does a patch's (a group): they
	// are reverted together.
	group, targets := []*undoEntry{e}, []*resolved{res}
	var together func(o *undoEntry) bool
	switch {
	case e.Group != "":
		together = func(o *undoEntry) bool { return o.Group == e.Group }
	case e.Op == opMove && e.Tx != "":
		together = func(o *undoEntry) bool { return o.Tx == e.Tx }
	}
	if together != nil {
		for o := range w.journal.live() {
			if !together(o) || o == e {
				continue
			}
			// The record names the file by its path with links resolved,
			// or a link's own path (judged on the link, as settle does):
			// a path that no longer resolves to itself has had a link put
			// on it since, which the restore would write through.
			resolve := w.resolve
			if o.Link {
				resolve = w.resolveEntry
			}
			or, err := resolve(op, o.Key)
			if err != nil || or.canonKey != o.Key || w.journal.newest(o.Key) != o {
				return nil, fserr.New(fserr.Conflict, op, p,
					"%s changed since the move of %s; undo would discard that change. Re-read the files and edit them instead.", o.Key, p)
			}
			group, targets = append(group, o), append(targets, or)
		}
		switch {
		case e.Group != "" && len(group) < e.GroupSize:
			// A file of the group was not recorded (too large) or its
			// record was evicted: undoing the rest could lose content.
			return nil, fserr.New(fserr.Conflict, op, p,
				"%s was changed with %d other file(s) of a move whose undo record is gone; undoing it alone could lose the moved content", p, e.GroupSize-1).
				WithHint("restore the files by hand (read them and write or move them back)")
		case e.Group == "" && len(group) == 1 && e.AfterExists:
			// The source's record was evicted: removing the destination
			// alone would lose the moved content.
			return nil, fserr.New(fserr.Conflict, op, p,
				"%s was moved here and the record of where it came from is gone; undo would lose its content", p)
		}
	}
	// The files are looked at, and changed, under their directory locks.
	ts := make([]lockTarget, len(targets))
	for i, t := range targets {
		ts[i] = targetOf(t)
	}
	if err := w.lockDirs(op, p, ts...); err != nil {
		return nil, err
	}
	states := make([]fileState, len(group))
	after, before := true, true
	for i, ge := range group {
		st, err := currentState(targets[i])
		if err != nil {
			return nil, osErr(op, targets[i].Given, err)
		}
		states[i] = st
		after = after && st.isAfter(ge)
		before = before && st.isBefore(ge)
	}
	if !after && before {
		return w.alreadyUndone(op, group, targets, states)
	}
	reqs := make([]*request, len(group))
	for i, ge := range group {
		var err error
		if reqs[i], err = w.undoRequest(op, ge, targets[i], states[i]); err != nil {
			return nil, err
		}
	}
	pl, err := w.plan(op, reqs, false)
	defer pl.close()
	if err != nil {
		return nil, err
	}
	if err := w.execute(op, randomTag(), pl); err != nil {
		return nil, err
	}
	if w.hooks.crashAt != nil && w.hooks.crashAt("undone") {
		return nil, errCrashed
	}
	// The directories the undone creates made go after their files and
	// before the records that name them: a crash in between leaves the
	// records, and the next Undo (alreadyUndone) removes them.
	removeAllMadeDirs(group, targets)
	if w.hooks.crashAt != nil && w.hooks.crashAt("undone-dirs") {
		return nil, errCrashed
	}
	// The files are restored; records whose drop fails (or is cut short
	// by a crash) are settled by the next Undo (alreadyUndone).
	_ = w.journal.drop(group...)
	out := make([]UndoResult, len(group))
	for i, ge := range group {
		out[i] = UndoResult{
			Path:     pl[i].res.Path,
			Op:       ge.Op,
			Restored: ge.Existed,
			Deleted:  !ge.Existed,
			Version:  pl[i].newVersion,
			Replaced: ge.AfterVersion,
		}
	}
	if len(out) > 1 {
		out[0].Also = out[1:]
	}
	return &out[0], nil
}

// alreadyUndone settles a change whose files are all as undoing it would
// leave them while its records are still there: an undo killed between
// its restore and the drop of the records (a crash, kill -9) left them.
// Refusing them as changed since would block the file's older history
// for good; restoring again would change nothing. So the records are
// dropped and the undo reported done, marked AlreadyUndone. Another
// writer who put back the very same content and mode gets the same
// answer, which is as true.
func (w *Workspace) alreadyUndone(op string, group []*undoEntry, targets []*resolved, states []fileState) (*UndoResult, error) {
	// The interrupted undo may have stopped before the directories its
	// creates made were removed.
	removeAllMadeDirs(group, targets)
	if err := w.journal.drop(group...); err != nil {
		return nil, stateErr(op, w.stateDir, err)
	}
	out := make([]UndoResult, len(group))
	for i, ge := range group {
		out[i] = UndoResult{
			Path:          targets[i].Path,
			Op:            ge.Op,
			Restored:      ge.Existed,
			Deleted:       !ge.Existed,
			Version:       states[i].version,
			AlreadyUndone: true,
		}
	}
	if len(out) > 1 {
		out[0].Also = out[1:]
	}
	return &out[0], nil
}

// removeAllMadeDirs removes, for each created file of group that undo
// removed, the parent directories its change made (removeMadeDirs).
func removeAllMadeDirs(group []*undoEntry, targets []*resolved) {
	for i, ge := range group {
		if !ge.Existed && ge.Dirs > 0 {
			removeMadeDirs(targets[i].r.root, targets[i].Rel, ge.Dirs)
		}
	}
}

// removeMadeDirs removes the n innermost parent directories of rel, which
// the change that created rel made (undoEntry.Dirs), deepest first, each
// with rmdir, so only while it is an empty directory: one that holds
// anything now (another writer's file or directory) stays, and so does
// every one above it. One already gone (an undo cut short after removing
// it) is passed over. The directory that held the outermost one removed
// is fsynced. It is cleanup after the undo proper: failures leave
// directories, never change a file.
func removeMadeDirs(root *os.Root, rel string, n int) {
	dirs := parentDirs(rel)
	n = min(n, len(dirs))
	removed := ""
	for i := len(dirs) - 1; i >= len(dirs)-n; i-- {
		if err := rmdir(root, dirs[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			break
		}
		removed = dirs[i]
	}
	if removed != "" {
		_ = syncDir(root, path.Dir(removed))
	}
}

// undoRequest is the change that reverts e on target, whose state is cur,
// or conflict when the file is no longer as e left it.
func (w *Workspace) undoRequest(op string, e *undoEntry, target *resolved, cur fileState) (*request, error) {
	p := target.Given
	if !cur.isAfter(e) {
		switch {
		case !cur.exists || cur.version != e.AfterVersion || !e.AfterExists:
		default:
			// Only the permissions or the owner changed: the undo would
			// undo that chmod or chown too. Both are named, so that one
			// step back does not meet a second refusal.
			var what, fix []string
			if !cur.modeAfter(e) {
				what = append(what, fmt.Sprintf("permissions changed since the recorded edit (now %#o, left at %#o)", cur.mode, e.AfterMode))
				fix = append(fix, fmt.Sprintf("set the permissions back to %#o (chmod)", e.AfterMode))
			}
			if !cur.ownerAfter(e) {
				a := e.AfterOwner
				what = append(what, fmt.Sprintf("owner changed since the recorded edit (now uid %d, gid %d; left as uid %d, gid %d)", cur.uid, cur.gid, a.UID, a.GID))
				fix = append(fix, fmt.Sprintf("chown the file back to %d:%d", a.UID, a.GID))
			}
			return nil, fserr.New(fserr.Conflict, op, p,
				"%s's %s; undo would discard that change", p, strings.Join(what, ", and its ")).
				WithHint("if the change is to be undone all the same, %s first, then undo; or edit the file instead", strings.Join(fix, " and "))
		}
		return nil, fserr.New(fserr.Conflict, op, p,
			"%s changed since the recorded edit; undo would discard that change. Re-read the file and edit it instead.", p)
	}
	curExists, curVersion := cur.exists, cur.version
	if !e.Existed {
		return &request{Change: Change{Path: p, Delete: true, ExpectedVersion: curVersion}}, nil
	}
	content, err := w.journal.readBlob(e)
	if err != nil {
		_ = w.journal.drop(e)
		return nil, fserr.New(fserr.IOError, op, p, "the undo record of %s is damaged and was discarded", p)
	}
	rq := &request{Change: Change{Path: p, Content: content, Mode: e.Mode, ExpectedVersion: curVersion, ExpectAbsent: !curExists}, forceMode: true}
	if e.Link {
		rq.Content, rq.link = nil, string(content)
	}
	if e.Owner != nil {
		// The file only: parent directories the undo re-creates stay
		// the daemon's, as any it creates. Over an existing file too: a
		// move over it gave it the moved file's owner.
		rq.fileOwner = &Owner{UID: e.Owner.UID, GID: e.Owner.GID}
	}
	return rq, nil
}

// fileState is what Undo compares with a record: whether the file
// exists, and the content version and permission bits of a regular file
// or the target of a symbolic link. A directory or special file exists
// with neither, which matches no recorded state.
type fileState struct {
	exists   bool
	version  string      // a regular file's
	mode     fs.FileMode // a regular file's permission bits
	uid, gid int         // a regular file's owner
	isLink   bool
	target   string // the link's
}

// isAfter reports whether the file is as e's change left it: content,
// and permission bits and owner where recorded.
func (s fileState) isAfter(e *undoEntry) bool {
	return s.exists == e.AfterExists && (!s.exists || s.version == e.AfterVersion && s.modeAfter(e) && s.ownerAfter(e))
}

// modeAfter reports whether the file has the permission bits e's change
// left it with, or they were not recorded.
func (s fileState) modeAfter(e *undoEntry) bool { return e.AfterMode == 0 || s.mode == e.AfterMode }

// ownerAfter reports whether the file has the owner e's change left it
// with, or it was not recorded.
func (s fileState) ownerAfter(e *undoEntry) bool {
	return e.AfterOwner == nil || s.uid == e.AfterOwner.UID && s.gid == e.AfterOwner.GID
}

// isBefore reports whether the file is as it was before e's change: what
// undoing e restores.
func (s fileState) isBefore(e *undoEntry) bool {
	switch {
	case !e.Existed:
		return !s.exists
	case e.Link:
		return s.isLink && Version([]byte(s.target)) == e.PrevVersion
	}
	return s.exists && s.version != "" && s.version == e.PrevVersion && s.mode == e.Mode
}

// currentState describes r now.
func currentState(r *resolved) (fileState, error) {
	root := r.r.root
	fi, err := root.Lstat(r.Rel)
	switch {
	case errors.Is(err, fs.ErrNotExist) || isNotDir(err):
		return fileState{}, nil
	case err != nil:
		return fileState{}, err
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := root.Readlink(r.Rel)
		return fileState{exists: true, isLink: true, target: target}, err
	case !fi.Mode().IsRegular():
		return fileState{exists: true}, nil
	}
	v, err := fileVersion(root, r.Rel)
	uid, gid, _ := fileOwner(fi)
	return fileState{exists: v != "", version: v, mode: fi.Mode() & permBits, uid: uid, gid: gid}, err
}

func blobName(seq int64) string { return path.Join(blobDir, strconv.FormatInt(seq, 10)) }

// refresh applies what was appended to the log since the last look, or
// rereads it when another process compacted it (a new inode).
func (j *undoJournal) refresh() error {
	f, err := j.state.OpenFile(undoLog, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		j.reset()
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	dev, ino := fileKey(fi)
	if dev != j.dev || ino != j.ino || fi.Size() < j.off {
		j.reset()
		j.dev, j.ino = dev, ino
	}
	if fi.Size() == j.off {
		return nil
	}
	data := make([]byte, fi.Size()-j.off)
	if _, err := io.ReadFull(io.NewSectionReader(f, j.off, int64(len(data))), data); err != nil {
		return err
	}
	consumed := 0
	for {
		i := bytes.IndexByte(data[consumed:], '\n')
		if i < 0 {
			break
		}
		j.applyLine(data[consumed : consumed+i])
		consumed += i + 1
	}
	if consumed < len(data) {
		// A torn append from a crash: cut it, so the next append starts
		// on a line of its own. We hold the lock; nobody else writes.
		if err := f.Truncate(j.off + int64(consumed)); err != nil {
			return err
		}
	}
	j.off += int64(consumed)
	return nil
}

// applyLine applies one line of the log (without its newline): the only
// way entries come and go in memory.
func (j *undoJournal) applyLine(line []byte) {
	var rec undoRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		return // a damaged line costs its entry, not the journal
	}
	j.apply(rec, int64(len(line))+1)
}

// apply applies rec, whose log line is lineLen bytes long (its newline
// included). An added entry is kept as it is, not copied.
func (j *undoJournal) apply(rec undoRecord, lineLen int64) {
	if rec.Next > j.next {
		j.next = rec.Next
	}
	if e := rec.Add; e != nil {
		j.insert(e, lineLen)
	}
	if e := j.pending[rec.Confirm]; e != nil {
		e.Pending = false
		if rec.AfterOwner != nil {
			e.AfterOwner = rec.AfterOwner
		}
		delete(j.pending, e.Seq)
	}
	if rec.Drop != 0 {
		if e := j.bySeq[rec.Drop]; e != nil {
			j.remove(e)
		}
	}
}

// insert adds e, read from a log line of lineLen bytes, as the newest
// entry.
func (j *undoJournal) insert(e *undoEntry, lineLen int64) {
	if n := len(j.order); n > 0 && j.order[n-1].Seq >= e.Seq {
		return // out of order: not written by this package
	}
	e.line = lineLen
	j.order = append(j.order, e)
	j.bySeq[e.Seq] = e
	if e.Pending {
		j.pending[e.Seq] = e
	}
	ks := append(j.byKey[e.Key], e)
	j.byKey[e.Key] = ks
	if len(ks) > j.limits.PerFile {
		j.over[e.Key] = true
	}
	j.size += e.Size
	j.inlined += int64(len(e.Data))
	j.liveLog += e.line
	if e.Seq >= j.next {
		j.next = e.Seq + 1
	}
}

// remove drops the live entry e.
func (j *undoJournal) remove(e *undoEntry) {
	e.dropped = true
	delete(j.bySeq, e.Seq)
	delete(j.pending, e.Seq)
	j.size -= e.Size
	j.inlined -= int64(len(e.Data))
	j.liveLog -= e.line

	// Per file, drops are nearly always of the oldest (evictions) or the
	// newest (Undo).
	ks, n := j.byKey[e.Key], len(j.byKey[e.Key])
	switch {
	case n == 1:
		ks = nil
	case ks[0] == e:
		ks[0] = nil
		ks = ks[1:]
	case ks[n-1] == e:
		ks[n-1] = nil
		ks = ks[:n-1]
	default:
		i, _ := slices.BinarySearchFunc(ks, e.Seq, func(o *undoEntry, seq int64) int { return cmp.Compare(o.Seq, seq) })
		ks = slices.Delete(ks, i, i+1)
	}
	if len(ks) == 0 {
		delete(j.byKey, e.Key)
	} else {
		j.byKey[e.Key] = ks
	}
	if len(ks) <= j.limits.PerFile {
		delete(j.over, e.Key)
	}

	// Keep both ends of order live, and squeeze the dropped entries out
	// when they are most of it: each entry is moved at most once per
	// squeeze, and a squeeze follows as many drops as it keeps entries.
	j.dead++
	for len(j.order) > 0 && j.order[0].dropped {
		j.order[0] = nil
		j.order = j.order[1:]
		j.dead--
	}
	for n := len(j.order); n > 0 && j.order[n-1].dropped; n-- {
		j.order[n-1] = nil
		j.order = j.order[:n-1]
		j.dead--
	}
	if j.dead > 64 && j.dead*2 > len(j.order) {
		kept := slices.DeleteFunc(j.order, func(o *undoEntry) bool { return o.dropped })
		j.order, j.dead = kept, 0
	}
}

// appendRecords appends recs to the log durably and applies them.
func (j *undoJournal) appendRecords(recs []undoRecord) error { return j.appendSync(recs, true) }

// appendSync appends recs and applies them; sync fsyncs the log first,
// which a record that the journal can do without after a crash (a
// confirm: settlePending comes to the same answer) may skip.
func (j *undoJournal) appendSync(recs []undoRecord, sync bool) error {
	var buf bytes.Buffer
	lens := make([]int64, len(recs))
	for i, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
		lens[i] = int64(len(b)) + 1
	}
	f, err := j.state.OpenFile(undoLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	// Nobody else appends while the state lock is held: when the log is
	// the one applied up to its end, what this append adds is recs,
	// applied from memory instead of read back.
	created, known := j.ino == 0, false
	if fi, err := f.Stat(); err == nil {
		dev, ino := fileKey(fi)
		known = !created && dev == j.dev && ino == j.ino && fi.Size() == j.off
	}
	_, err = f.Write(buf.Bytes())
	if err == nil && (sync || created) {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && created {
		err = syncDir(j.state, undoDir)
	}
	if err == nil && sync {
		j.removeDoomed() // their drop records are durable now
	}
	if err != nil || !known {
		if rerr := j.refresh(); err == nil {
			err = rerr
		}
		return err
	}
	for i, r := range recs {
		j.apply(r, lens[i])
	}
	j.off += int64(buf.Len())
	return nil
}

// addPending records pend, with the previous contents blobs: the blobs,
// then one fsynced append of their add records. It reports which of pend
// were recorded (those the limits do not evict at once, see evictions),
// and the live entries the limits evict to make room for them. It evicts
// nothing itself; confirm does, once the change is made, so that a change
// that fails or never happens costs no history. The caller has refreshed
// the journal under the state lock.
func (j *undoJournal) addPending(pend []*undoEntry, blobs [][]byte) (kept []bool, evicted []*undoEntry, err error) {
	for i, e := range pend {
		e.Seq = j.next + int64(i)
	}
	dropped, evicted := j.evictions(pend)
	kept = make([]bool, len(pend))
	var recs []undoRecord
	var written []*undoEntry
	removeBlobs := func() {
		for _, e := range written {
			_ = j.state.Remove(blobName(e.Seq))
		}
	}
	inlined := j.inlined
	for i, e := range pend {
		if dropped[e.Seq] {
			continue
		}
		kept[i] = true
		recs = append(recs, undoRecord{Add: e})
		if !e.Existed {
			continue
		}
		if n := int64(len(blobs[i])); n <= j.inlineMax && inlined+n <= inlineBudget {
			// A copy: the journal keeps it, and blobs[i] may share a larger array.
			e.Inline, e.Data = true, bytes.Clone(blobs[i])
			inlined += n
			continue
		}
		if err := j.writeBlob(e.Seq, blobs[i]); err != nil {
			removeBlobs()
			return nil, nil, err
		}
		written = append(written, e)
	}
	if len(recs) == 0 {
		return kept, evicted, nil
	}
	if len(written) > 0 {
		if err := syncDir(j.state, blobDir); err != nil {
			removeBlobs()
			return nil, nil, err
		}
	}
	if err := j.appendRecords(recs); err != nil {
		removeBlobs()
		return nil, nil, err
	}
	return kept, evicted, nil
}

// confirm marks the pending entries among es as made, with the owners
// their changes left their files with (owners, by index; nil or a nil
// element: not known), and drops the entries of evict still live, in one
// append; sync fsyncs it. The blobs of
// entries dropped by an append not fsynced are removed after the next one
// that is (a crash before it keeps both the entry and its blob; an orphan
// blob is removed by the next Open).
func (j *undoJournal) confirm(es, evict []*undoEntry, owners []*entryOwner, sync bool) error {
	var recs []undoRecord
	for i, e := range es {
		if e.Pending {
			rec := undoRecord{Confirm: e.Seq}
			if i < len(owners) {
				rec.AfterOwner = owners[i]
			}
			recs = append(recs, rec)
		}
	}
	var evicted []*undoEntry
	for _, e := range evict {
		if j.bySeq[e.Seq] == e {
			recs = append(recs, undoRecord{Drop: e.Seq})
			evicted = append(evicted, e)
		}
	}
	if len(recs) == 0 {
		return j.compact()
	}
	if err := j.appendSync(recs, sync); err != nil {
		return err // written or not, the evicted blobs stay: harmless
	}
	for _, e := range evicted {
		if e.hasBlob() {
			j.doomed = append(j.doomed, e.Seq)
		}
	}
	if sync {
		j.removeDoomed()
	}
	_ = j.compact()
	return nil
}

// removeDoomed removes the blobs of entries whose drop records are now
// durable.
func (j *undoJournal) removeDoomed() {
	for _, seq := range j.doomed {
		_ = j.state.Remove(blobName(seq))
	}
	j.doomed = j.doomed[:0]
}

func (j *undoJournal) writeBlob(seq int64, data []byte) error {
	return writeSynced(j.state, blobName(seq), os.O_TRUNC, data)
}

// evictions decides which entries go once pend is added: beyond PerFile
// per file (oldest first), then beyond MaxEntries and TotalBytes overall
// (oldest first, across files). It returns the Seqs of all that go, pend's
// included, and the live entries among them in ascending Seq. It visits
// the files pend touches (and any over PerFile already) and, from the
// oldest, only the entries it evicts and the dropped ones among them.
func (j *undoJournal) evictions(pend []*undoEntry) (map[int64]bool, []*undoEntry) {
	dropped := map[int64]bool{}
	var evicted []*undoEntry
	count, total := j.len()+len(pend), j.size
	for _, e := range pend {
		total += e.Size
	}
	drop := func(e *undoEntry, live bool) {
		dropped[e.Seq] = true
		count--
		total -= e.Size
		if live {
			evicted = append(evicted, e)
		}
	}

	added := map[string][]*undoEntry{} // pend by file, in order: one pass, not one per file
	for _, e := range pend {
		added[e.Key] = append(added[e.Key], e)
	}
	perFile := func(key string) {
		live, added := j.byKey[key], added[key]
		for i := range len(live) + len(added) - j.limits.PerFile {
			if i < len(live) {
				drop(live[i], true)
			} else {
				drop(added[i-len(live)], false)
			}
		}
	}
	for key := range added {
		perFile(key)
	}
	for key := range j.over {
		if added[key] == nil {
			perFile(key)
		}
	}

	within := func() bool { return count <= j.limits.MaxEntries && total <= j.limits.TotalBytes }
	for _, e := range j.order {
		if within() {
			break
		}
		if !e.dropped && !dropped[e.Seq] {
			drop(e, true)
		}
	}
	for _, e := range pend {
		if within() {
			break
		}
		if !dropped[e.Seq] {
			drop(e, false)
		}
	}
	slices.SortFunc(evicted, func(a, b *undoEntry) int { return cmp.Compare(a.Seq, b.Seq) })
	return dropped, evicted
}

// newest returns the newest entry for key, or nil.
func (j *undoJournal) newest(key string) *undoEntry {
	if ks := j.byKey[key]; len(ks) > 0 {
		return ks[len(ks)-1]
	}
	return nil
}

// readBlob returns e's previous content, checked against its version.
func (j *undoJournal) readBlob(e *undoEntry) ([]byte, error) {
	data := e.Data
	if !e.Inline {
		var err error
		if data, err = j.state.ReadFile(blobName(e.Seq)); err != nil {
			return nil, err
		}
	}
	if Version(data) != e.PrevVersion {
		return nil, errors.New("undo blob does not match its version")
	}
	return data, nil
}

// drop removes es from the journal in one append (one write, one
// fsync).
func (j *undoJournal) drop(es ...*undoEntry) error {
	recs := make([]undoRecord, len(es))
	for i, e := range es {
		recs[i] = undoRecord{Drop: e.Seq}
	}
	if err := j.appendRecords(recs); err != nil {
		return err
	}
	for _, e := range es {
		if e.hasBlob() {
			_ = j.state.Remove(blobName(e.Seq))
		}
	}
	return nil
}

// hasBlob reports whether e's previous content is in a blob of its own.
func (e *undoEntry) hasBlob() bool { return e.Existed && !e.Inline }

// tidy runs at Open: it drops entries whose content is missing, removes
// blobs no entry refers to (left by a crash between blob and log) and a
// torn compaction, and compacts.
func (j *undoJournal) tidy() error {
	_ = j.state.Remove(undoLogTmp)
	if err := j.refresh(); err != nil {
		return err
	}
	names, err := sortedNames(j.state, blobDir)
	if err != nil {
		return err
	}
	have := make(map[int64]bool, len(names))
	live := make(map[int64]bool, j.len())
	for e := range j.live() {
		if e.hasBlob() {
			live[e.Seq] = true
		}
	}
	for _, n := range names {
		seq, err := strconv.ParseInt(n, 10, 64)
		if err != nil || !live[seq] {
			_ = j.state.Remove(path.Join(blobDir, n))
			continue
		}
		have[seq] = true
	}
	var recs []undoRecord
	for e := range j.live() {
		if e.hasBlob() && !have[e.Seq] {
			recs = append(recs, undoRecord{Drop: e.Seq})
		}
	}
	if len(recs) > 0 {
		if err := j.appendRecords(recs); err != nil {
			return err
		}
	}
	return j.compact()
}

// compact rewrites the log with only the live entries once at most a
// quarter of it is live: temp, fsync, rename, directory fsync. Other
// processes notice the new inode and reread it. Whether to is decided on
// the counted size of the live entries' lines, before encoding anything:
// encoding them all only to find the log still mostly live made every
// append past compactAt cost the whole journal.
func (j *undoJournal) compact() error {
	header := undoRecord{Next: j.next}
	headerLen := int64(len(`{"next":}`+"\n") + len(strconv.FormatInt(j.next, 10)))
	if j.off < j.compactAt || (headerLen+j.liveLog)*4 > j.off {
		return nil
	}
	var buf bytes.Buffer
	buf.Grow(int(headerLen + j.liveLog))
	enc := json.NewEncoder(&buf) // json.Marshal's encoding, newline-terminated
	if err := enc.Encode(header); err != nil {
		return err
	}
	for e := range j.live() {
		if err := enc.Encode(undoRecord{Add: e}); err != nil {
			return err
		}
	}
	err := writeSynced(j.state, undoLogTmp, os.O_TRUNC, buf.Bytes())
	if err == nil {
		err = j.state.Rename(undoLogTmp, undoLog)
	}
	if err != nil {
		_ = j.state.Remove(undoLogTmp)
		return err
	}
	if err := syncDir(j.state, undoDir); err != nil {
		return err
	}
	j.reset()
	return j.refresh()
}

// writeSynced writes data to name in root (created 0600; flag adds
// O_APPEND or O_TRUNC) and fsyncs it before closing.
func writeSynced(root *os.Root, name string, flag int, data []byte) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|flag, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
