package workspace

import (
	"cmp"
	"errors"
	"slices"
	"time"
)

// pendingUndo is the undo record of one change, written before the change
// is made (prepareUndo) and settled after it (finishUndo).
type pendingUndo struct {
	entries  []*undoEntry // in the journal, Pending
	files    []*planned   // the planned change of each of entries
	evict    []*undoEntry // live entries the limits evict once it is made
	recorded []bool       // per planned file: it has an entry
}

// prepareUndo records, pending, the previous state of every file of pl,
// which is about to be applied: blobs first, then the log's add records,
// both fsynced, so that a crash after the change leaves its record (see
// the journal's doc). Evictions the limits require happen here too. A
// failure only leaves the change unrecorded; the change may still be
// made. The caller holds the locks and must call finishUndo once the
// change is made or has failed, before it lets them go.
func (w *Workspace) prepareUndo(op, txID string, pl plan) *pendingUndo {
	pu := &pendingUndo{recorded: make([]bool, len(pl))}
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
			AfterExists: p.kind != kindDelete, AfterVersion: p.newVersion, Pending: true,
		}
		if m := p.mode & permBits; e.AfterExists && p.newLink == "" && m != 0 {
			e.AfterMode = m
		}
		if p.prevLink != "" {
			// A link has no version; its blob, the target, has one.
			e.Link, e.Mode, e.PrevVersion = true, 0, Version(p.prev)
		}
		if p.existed {
			e.Owner = &entryOwner{UID: p.uid, GID: p.gid}
		} else {
			e.Dirs = p.madeParents
		}
		if g := group(p); g != "" {
			e.Group, e.GroupSize = txID+"/"+g, sizes[g]
		}
		pend = append(pend, e)
		blobs = append(blobs, p.prev)
		idx = append(idx, i)
	}
	if len(pend) == 0 {
		return pu
	}
	if err := w.freshJournal(); err != nil {
		return pu
	}
	ok, evict, err := w.journal.addPending(pend, blobs)
	if err != nil {
		return pu
	}
	pu.evict = evict
	for k, i := range idx {
		if ok[k] {
			pu.recorded[i] = true
			pu.entries = append(pu.entries, pend[k])
			pu.files = append(pu.files, pl[i])
			w.inflight[pend[k].Seq] = true
		}
	}
	return pu
}

// finishUndo settles pu once its change is made (committed) or has
// failed, and reports which files have a record. A confirmation is not
// fsynced: lost in a crash, settlePending reaches the same answer from the
// files. A failed change's entries are settled from the files as a
// crash's are: a failure can come after the change was made (a directory
// fsync), or leave a transaction for recovery (a failed rollback), whose
// entries then stay pending until it is settled.
func (w *Workspace) finishUndo(pu *pendingUndo, committed bool) []bool {
	if len(pu.entries) == 0 {
		return pu.recorded
	}
	for _, e := range pu.entries {
		delete(w.inflight, e.Seq)
	}
	if !committed {
		w.settle(pu.entries)
		clear(pu.recorded)
		return pu.recorded
	}
	// A failure leaves them pending, and settlePending confirms them
	// (without the owners: a chown since could not be told from what the
	// change did).
	_ = w.journal.confirm(pu.entries, pu.evict, afterOwners(pu), false)
	return pu.recorded
}

// afterOwners looks up the owner of each regular file pu's change left in
// place, now that it is made and still locked: what the change gave it
// (the previous owner, the caller's, a setgid directory's group, or the
// process's where a chown was not permitted). nil where the file is not
// a regular file (a link: undo compares its target only) or cannot be
// looked at.
func afterOwners(pu *pendingUndo) []*entryOwner {
	owners := make([]*entryOwner, len(pu.entries))
	for i, e := range pu.entries {
		p := pu.files[i]
		if !e.AfterExists || p.newLink != "" {
			continue
		}
		fi, err := p.res.r.root.Lstat(p.res.Rel)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if uid, gid, _ := fileOwner(fi); uid >= 0 {
			owners[i] = &entryOwner{UID: uid, GID: gid}
		}
	}
	return owners
}

// executeRecorded runs apply, which makes the change pl describes, between
// prepareUndo and finishUndo, and reports which of pl's files have an
// undo record. The whole plan is one record set: a move's two sides count
// each other (GroupSize), and a failed transaction is settled whole.
func (w *Workspace) executeRecorded(op, txID string, pl plan, apply func() error) ([]bool, error) {
	pu := w.prepareUndo(op, txID, pl)
	if w.hooks.crashAt != nil && w.hooks.crashAt("undo-pending") {
		return nil, errCrashed
	}
	err := apply()
	if errors.Is(err, errCrashed) || (err == nil && w.hooks.crashAt != nil && w.hooks.crashAt("undo-unconfirmed")) {
		return nil, errCrashed // a test's crash: nothing more happens
	}
	return w.finishUndo(pu, err == nil), err
}

// freshJournal brings the journal up to date under the state lock:
// what other processes appended, and the pending entries a crash left
// settled.
func (w *Workspace) freshJournal() error {
	if err := w.journal.refresh(); err != nil {
		return err
	}
	w.settlePending()
	return nil
}

// settlePending settles the pending entries in the journal that are not
// this workspace's change in flight (inflight): a crash between recording
// a change and confirming it left them, or a confirmation that could not
// be written. It runs under the state lock, after recovery.
func (w *Workspace) settlePending() {
	if len(w.journal.pending) == 0 {
		return
	}
	es := make([]*undoEntry, 0, len(w.journal.pending))
	for _, e := range w.journal.pending {
		if !w.inflight[e.Seq] {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(a, b *undoEntry) int { return cmp.Compare(a.Seq, b.Seq) })
	w.settle(es)
}

// settle confirms or drops the pending entries es from their files: an
// entry whose file is as its change would leave it is confirmed; one
// whose file is still as before the change, and not also as after it, is
// dropped, as the change was never made. A file changed since either way
// keeps its entry, and Undo reports the conflict as for any record. The
// records of one transaction (a commit of several files, a tree merge, a
// move) go together: when one of its files is as before, none of its
// changes happened — recovery made the transaction all or nothing, and a
// move across file systems killed before it removed its source did not
// happen even if its copy reached the destination.
//
// Entries stay pending, live (Undo checks their file anyway), while they
// cannot be judged yet: their file is outside this workspace's roots, or
// named by an interrupted transaction or move that recovery has not
// settled (a blocked path, a manifest still in the state directory).
// Failures leave entries pending too.
func (w *Workspace) settle(es []*undoEntry) {
	const op = "undo"
	made := map[int64]bool{}
	unsettledTx := map[string]bool{}
	for _, e := range es {
		if e.Tx != "" {
			if _, seen := unsettledTx[e.Tx]; !seen {
				on, err := exists(w.state, manifestName(e.Tx))
				unsettledTx[e.Tx] = on || err != nil
			}
			if unsettledTx[e.Tx] {
				continue
			}
		}
		if w.refuseBlockedKey(op, e.Key, e.Key) != nil {
			continue
		}
		resolve := w.resolve
		if e.Link {
			resolve = w.resolveEntry // the record is the link's own
		}
		res, err := resolve(op, e.Key)
		if err != nil {
			continue
		}
		st, err := currentState(res)
		if err != nil {
			continue
		}
		made[e.Seq] = !st.isBefore(e) || st.isAfter(e)
	}
	// The changes of one transaction, merge or move were made together or
	// not at all: one file as before settles the others, which may look
	// both ways (new content equal to the old).
	notMade := map[string]bool{}
	for _, e := range es {
		if m, judged := made[e.Seq]; judged && !m && e.Tx != "" {
			notMade[e.Tx] = true
		}
	}
	for _, e := range es {
		if _, judged := made[e.Seq]; judged && notMade[e.Tx] {
			made[e.Seq] = false
		}
	}
	var confirm, gone []*undoEntry
	for _, e := range es {
		switch m, judged := made[e.Seq]; {
		case !judged:
		case m:
			confirm = append(confirm, e)
		default:
			gone = append(gone, e)
		}
	}
	// Two appends, fsynced: a path only crashes and failures take.
	if len(confirm) > 0 {
		_, evict := w.journal.evictions(nil)
		_ = w.journal.confirm(confirm, evict, nil, true)
	}
	if len(gone) > 0 {
		_ = w.journal.drop(gone...)
	}
}
