package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"syscall"
	"time"

	"github.com/fsplane/fsplane/internal/fserr"
)

// The undo journal lives in StateDir/undo: "log", an append-only file of
// JSON lines (add an entry, drop an entry), and "blobs/<seq>", the previous
// content of each entry. A blob is written and fsynced before the log line
// that refers to it, so a crash leaves at worst an orphan blob, removed by
// the next Open. Every process sharing the state directory appends to the
// same log under the state lock and re-reads what others appended before
// acting; the log is compacted when it is mostly dead records.

const (
	undoLog    = "undo/log"
	undoLogTmp = "undo/log.tmp"
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
	// Owner is the owner the file had (absent in entries written before
	// it was kept): an undo that re-creates the file gives it back.
	Owner *entryOwner `json:"owner,omitempty"`
	// Group ties entries of one transaction that are undone together (see
	// Change.Group); GroupSize is how many changes it had.
	Group     string `json:"group,omitempty"`
	GroupSize int    `json:"group_size,omitempty"`
	// Link: the path was a symbolic link (removed, or replaced by a file,
	// through Change.Entry); the blob holds its target, and undo makes
	// the link again.
	Link bool `json:"link,omitempty"`
}

type entryOwner struct {
	UID int `json:"uid"`
	GID int `json:"gid"`
}

type undoRecord struct {
	Next int64      `json:"next,omitempty"` // lowest unused seq (compaction keeps it)
	Add  *undoEntry `json:"add,omitempty"`
	Drop int64      `json:"drop,omitempty"`
}

// undoJournal is the in-memory view of the log. It is used only under the
// Workspace mutex and the state lock.
type undoJournal struct {
	state   *os.Root
	limits  UndoLimits
	entries []*undoEntry // ascending Seq
	next    int64
	dev     uint64
	ino     uint64
	off     int64 // bytes of the log applied
	// compactAt is defaultCompactAt; not meant to be changed, but
	// changeable for tests.
	compactAt int64
}

func newUndoJournal(state *os.Root, l UndoLimits) *undoJournal {
	j := &undoJournal{state: state, limits: l, compactAt: defaultCompactAt}
	j.reset()
	return j
}

func (j *undoJournal) reset() {
	j.entries, j.next, j.dev, j.ino, j.off = nil, 1, 0, 0, 0
}

// Undo reverts the newest recorded change of p. It refuses with conflict
// when the file is no longer as that change left it (content or
// existence), because restoring would discard the later change; nothing is
// changed then. Undoing a create deletes the file; otherwise the previous
// content and mode are restored with the same atomic machinery as Commit.
// The undo itself is not recorded, and the entry is consumed, so repeated
// Undo calls walk back through the file's history. A move (see Move) is
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
	if err := w.journal.refresh(); err != nil {
		return nil, stateErr(op, w.stateDir, err)
	}
	e := w.journal.newest(res.canonKey)
	if e == nil {
		return nil, fserr.New(fserr.BadRequest, op, p, "no undo history for %s", p)
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
		for _, o := range w.journal.entries {
			if !together(o) || o == e {
				continue
			}
			or, err := w.resolve(op, o.Key)
			if err != nil || w.journal.newest(o.Key) != o {
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
	reqs := make([]*request, len(group))
	for i, ge := range group {
		var err error
		if reqs[i], err = w.undoRequest(op, ge, targets[i]); err != nil {
			return nil, err
		}
	}
	pl, err := w.plan(op, reqs, false)
	defer pl.close()
	if err != nil {
		return nil, err
	}
	if _, err := w.execute(op, pl); err != nil {
		return nil, err
	}
	// The files are restored; a failure to drop an entry only leaves an
	// entry whose after-state no longer matches, which Undo refuses.
	out := make([]UndoResult, len(group))
	for i, ge := range group {
		_ = w.journal.drop(ge)
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

// undoRequest is the change that reverts e on target, or conflict when
// the file is no longer as e left it.
func (w *Workspace) undoRequest(op string, e *undoEntry, target *resolved) (*request, error) {
	p := target.Given
	curExists, curVersion, err := currentState(target)
	if err != nil {
		return nil, osErr(op, p, err)
	}
	if curExists != e.AfterExists || (curExists && curVersion != e.AfterVersion) {
		return nil, fserr.New(fserr.Conflict, op, p,
			"%s changed since the recorded edit; undo would discard that change. Re-read the file and edit it instead.", p)
	}
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

// currentState reports whether r exists and its content version. A
// directory or special file counts as existing with no version, which
// matches no recorded state.
func currentState(r *resolved) (bool, string, error) {
	fi, err := r.r.root.Lstat(r.Rel)
	if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
		return false, "", nil
	}
	if err != nil {
		return false, "", err
	}
	if !fi.Mode().IsRegular() {
		return true, "", nil
	}
	v, err := fileVersion(r.r.root, r.Rel)
	return v != "", v, err
}

// recordUndo records the previous state of every file of a committed plan
// and reports which were recorded. The commit has happened, so a failure
// here is not the commit's: it only leaves entries unrecorded.
func (w *Workspace) recordUndo(op, txID string, pl plan) []bool {
	recorded := make([]bool, len(pl))
	var (
		pend  []*undoEntry
		blobs [][]byte
		idx   []int
	)
	now := time.Now().UTC()
	sizes := map[string]int{}
	group := func(p *planned) string {
		if p.req == nil {
			return "" // a plan made without requests (a copy's install, a move): no group
		}
		return p.req.Group
	}
	for _, p := range pl {
		if g := group(p); g != "" {
			sizes[g]++
		}
	}
	for i, p := range pl {
		if p.existed && !p.kept {
			continue // larger than MaxEntryBytes
		}
		e := &undoEntry{
			Key: p.res.canonKey, Op: op, Tx: txID, Time: now,
			Existed: p.existed, Mode: p.prevMode, Size: int64(len(p.prev)), PrevVersion: p.prevVersion,
			AfterExists: p.kind != kindDelete, AfterVersion: p.newVersion,
		}
		if p.prevLink != "" {
			// A link has no version; its blob, the target, has one.
			e.Link, e.Mode, e.PrevVersion = true, 0, Version(p.prev)
		}
		if p.existed {
			e.Owner = &entryOwner{UID: p.uid, GID: p.gid}
		}
		if g := group(p); g != "" {
			e.Group, e.GroupSize = txID+"/"+g, sizes[g]
		}
		pend = append(pend, e)
		blobs = append(blobs, p.prev)
		idx = append(idx, i)
	}
	if len(pend) == 0 {
		return recorded
	}
	ok, err := w.journal.add(pend, blobs)
	if err != nil {
		return recorded
	}
	for k, i := range idx {
		recorded[i] = ok[k]
	}
	return recorded
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
	var dev, ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		dev, ino = uint64(st.Dev), uint64(st.Ino)
	}
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

func (j *undoJournal) applyLine(line []byte) {
	var rec undoRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		return // a damaged line costs its entry, not the journal
	}
	if rec.Next > j.next {
		j.next = rec.Next
	}
	if e := rec.Add; e != nil {
		if n := len(j.entries); n > 0 && j.entries[n-1].Seq >= e.Seq {
			return // out of order: not written by this package
		}
		j.entries = append(j.entries, e)
		if e.Seq >= j.next {
			j.next = e.Seq + 1
		}
	}
	if rec.Drop != 0 {
		for i, e := range j.entries {
			if e.Seq == rec.Drop {
				j.entries = append(j.entries[:i], j.entries[i+1:]...)
				break
			}
		}
	}
}

// appendRecords appends recs to the log durably and applies them.
func (j *undoJournal) appendRecords(recs []undoRecord) error {
	var buf bytes.Buffer
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	created := j.ino == 0
	err := writeSynced(j.state, undoLog, os.O_APPEND, buf.Bytes())
	if err == nil && created {
		err = syncDir(j.state, undoDir)
	}
	if rerr := j.refresh(); err == nil {
		err = rerr
	}
	return err
}

// add records pend (with the previous contents blobs) and evicts what the
// limits require, oldest first. It reports which of pend survived.
func (j *undoJournal) add(pend []*undoEntry, blobs [][]byte) ([]bool, error) {
	if err := j.refresh(); err != nil {
		return nil, err
	}
	for i, e := range pend {
		e.Seq = j.next + int64(i)
	}
	removeBlobs := func(es []*undoEntry) {
		for _, e := range es {
			if e.Existed {
				_ = j.state.Remove(blobName(e.Seq))
			}
		}
	}
	wrote := false
	for i, e := range pend {
		if !e.Existed {
			continue
		}
		if err := j.writeBlob(e.Seq, blobs[i]); err != nil {
			removeBlobs(pend)
			return nil, err
		}
		wrote = true
	}
	if wrote {
		if err := syncDir(j.state, blobDir); err != nil {
			removeBlobs(pend)
			return nil, err
		}
	}
	dropped := j.evictions(pend)
	var recs []undoRecord
	var gone []*undoEntry
	kept := make([]bool, len(pend))
	for i, e := range pend {
		if dropped[e.Seq] {
			gone = append(gone, e)
			continue
		}
		kept[i] = true
		recs = append(recs, undoRecord{Add: e})
	}
	for _, e := range j.entries {
		if dropped[e.Seq] {
			recs = append(recs, undoRecord{Drop: e.Seq})
			gone = append(gone, e)
		}
	}
	if len(recs) == 0 {
		removeBlobs(pend)
		return kept, nil
	}
	if err := j.appendRecords(recs); err != nil {
		removeBlobs(pend)
		return nil, err
	}
	removeBlobs(gone)
	_ = j.compact()
	return kept, nil
}

func (j *undoJournal) writeBlob(seq int64, data []byte) error {
	return writeSynced(j.state, blobName(seq), os.O_TRUNC, data)
}

// evictions decides which entries go once pend is added: beyond PerFile
// per file (oldest first), then beyond MaxEntries and TotalBytes overall
// (oldest first, across files).
func (j *undoJournal) evictions(pend []*undoEntry) map[int64]bool {
	all := append(append([]*undoEntry(nil), j.entries...), pend...)
	dropped := map[int64]bool{}
	perKey := map[string]int{}
	for i := len(all) - 1; i >= 0; i-- {
		e := all[i]
		perKey[e.Key]++
		if perKey[e.Key] > j.limits.PerFile {
			dropped[e.Seq] = true
		}
	}
	count, total := 0, int64(0)
	for _, e := range all {
		if !dropped[e.Seq] {
			count++
			total += e.Size
		}
	}
	for _, e := range all {
		if count <= j.limits.MaxEntries && total <= j.limits.TotalBytes {
			break
		}
		if dropped[e.Seq] {
			continue
		}
		dropped[e.Seq] = true
		count--
		total -= e.Size
	}
	return dropped
}

// newest returns the newest entry for key, or nil.
func (j *undoJournal) newest(key string) *undoEntry {
	for i := len(j.entries) - 1; i >= 0; i-- {
		if j.entries[i].Key == key {
			return j.entries[i]
		}
	}
	return nil
}

// readBlob returns e's previous content, checked against its version.
func (j *undoJournal) readBlob(e *undoEntry) ([]byte, error) {
	data, err := j.state.ReadFile(blobName(e.Seq))
	if err != nil {
		return nil, err
	}
	if Version(data) != e.PrevVersion {
		return nil, errors.New("undo blob does not match its version")
	}
	return data, nil
}

// drop removes e from the journal.
func (j *undoJournal) drop(e *undoEntry) error {
	if err := j.appendRecords([]undoRecord{{Drop: e.Seq}}); err != nil {
		return err
	}
	if e.Existed {
		_ = j.state.Remove(blobName(e.Seq))
	}
	return nil
}

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
	live := make(map[int64]bool, len(j.entries))
	for _, e := range j.entries {
		if e.Existed {
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
	for _, e := range j.entries {
		if e.Existed && !have[e.Seq] {
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
// processes notice the new inode and reread it.
func (j *undoJournal) compact() error {
	if j.off < j.compactAt {
		return nil
	}
	var buf bytes.Buffer
	for _, r := range append([]undoRecord{{Next: j.next}}, j.liveRecords()...) {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if int64(buf.Len())*4 > j.off {
		return nil
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

func (j *undoJournal) liveRecords() []undoRecord {
	out := make([]undoRecord, len(j.entries))
	for i, e := range j.entries {
		out[i] = undoRecord{Add: e}
	}
	return out
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
