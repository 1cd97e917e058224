package workspace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// journalSummary is what a journal knows, in comparable form.
type journalSummary struct {
	Seqs    []int64            // live, ascending
	Keys    map[string][]int64 // live per file, ascending
	Over    []string           // files over PerFile, sorted
	Pending []int64            // live and pending, ascending
	Size    int64
	LiveLog int64
	Next    int64
	Off     int64
}

func summarize(j *undoJournal) journalSummary {
	s := journalSummary{Keys: map[string][]int64{}, Size: j.size, LiveLog: j.liveLog, Next: j.next, Off: j.off}
	for e := range j.live() {
		s.Seqs = append(s.Seqs, e.Seq)
	}
	for k, es := range j.byKey {
		for _, e := range es {
			s.Keys[k] = append(s.Keys[k], e.Seq)
		}
	}
	for k := range j.over {
		s.Over = append(s.Over, k)
	}
	slices.Sort(s.Over)
	for seq := range j.pending {
		s.Pending = append(s.Pending, seq)
	}
	slices.Sort(s.Pending)
	return s
}

// checkJournal fails t unless j's indexes and counters agree with its
// entries and with those of a journal that reads the same log afresh, so
// that what was kept up one add or drop at a time is what a reread
// derives.
func checkJournal(t *testing.T, j *undoJournal) {
	t.Helper()
	if n := len(j.order); n > 0 && (j.order[0].dropped || j.order[n-1].dropped) {
		t.Errorf("an end of order is a dropped entry")
	}
	want := journalSummary{Keys: map[string][]int64{}, Next: j.next, Off: j.off}
	dead := 0
	for i, e := range j.order {
		if i > 0 && j.order[i-1].Seq >= e.Seq {
			t.Errorf("order not ascending at %d", i)
		}
		if e.dropped {
			dead++
			continue
		}
		if j.bySeq[e.Seq] != e {
			t.Errorf("entry %d is not indexed by its seq", e.Seq)
		}
		want.Seqs = append(want.Seqs, e.Seq)
		if e.Pending {
			want.Pending = append(want.Pending, e.Seq)
		}
		want.Keys[e.Key] = append(want.Keys[e.Key], e.Seq)
		want.Size += e.Size
		want.LiveLog += e.line
	}
	for k, seqs := range want.Keys {
		if len(seqs) > j.limits.PerFile {
			want.Over = append(want.Over, k)
		}
	}
	slices.Sort(want.Over)
	if dead != j.dead {
		t.Errorf("dead = %d, %d entries of order are dropped", j.dead, dead)
	}
	if len(j.bySeq) != len(want.Seqs) {
		t.Errorf("bySeq holds %d entries, %d are live", len(j.bySeq), len(want.Seqs))
	}
	got := summarize(j)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counters disagree with the entries (-entries +counters):\n%s", diff)
	}
	afresh := newUndoJournal(j.state, j.limits)
	if err := afresh.refresh(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(summarize(afresh), got); diff != "" {
		t.Errorf("journal disagrees with a reread of its log (-reread +journal):\n%s", diff)
	}
}

// compactionDue reports whether j's log should have been compacted: at
// least compactAt long and at most a quarter live.
func compactionDue(j *undoJournal) bool {
	header := int64(len(`{"next":}`+"\n") + len(strconv.FormatInt(j.next, 10)))
	return j.off >= j.compactAt && (header+j.liveLog)*4 <= j.off
}

// modelEntry and modelEvictions are the journal as it was before it kept
// counters: the whole journal copied and counted on every add. The
// journal must evict exactly what they do.
type modelEntry struct {
	seq  int64
	key  string
	size int64
}

func modelEvictions(all []modelEntry, l UndoLimits) map[int64]bool {
	dropped := map[int64]bool{}
	perKey := map[string]int{}
	for i := len(all) - 1; i >= 0; i-- {
		e := all[i]
		perKey[e.key]++
		if perKey[e.key] > l.PerFile {
			dropped[e.seq] = true
		}
	}
	count, total := 0, int64(0)
	for _, e := range all {
		if !dropped[e.seq] {
			count++
			total += e.size
		}
	}
	for _, e := range all {
		if count <= l.MaxEntries && total <= l.TotalBytes {
			break
		}
		if dropped[e.seq] {
			continue
		}
		dropped[e.seq] = true
		count--
		total -= e.size
	}
	return dropped
}

func openStateRoot(t *testing.T) *os.Root {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, blobDir), 0o700); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestUndoJournalMatchesModel runs random adds, drops (of the newest
// entry of a file, as Undo does, and of any entry, as tidy and other
// processes may), reloads (under a changed PerFile, as another process
// might have) and compactions, and checks after each step that the
// journal keeps what the model keeps, that its counters are true, and
// that it compacted when due.
func TestUndoJournalMatchesModel(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		limits UndoLimits
	}{
		{"per file", UndoLimits{PerFile: 3, MaxEntries: 1000, TotalBytes: 1 << 30}},
		{"max entries", UndoLimits{PerFile: 50, MaxEntries: 12, TotalBytes: 1 << 30}},
		{"total bytes", UndoLimits{PerFile: 50, MaxEntries: 1000, TotalBytes: 400}},
		{"all limits", UndoLimits{PerFile: 2, MaxEntries: 8, TotalBytes: 300}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 1))
			state := openStateRoot(t)
			limits := tc.limits
			j := newUndoJournal(state, limits)
			j.compactAt = 1 << 10
			j.inlineMax = 64 // contents of 0–150 bytes: inline and in blobs
			var model []modelEntry
			compactions := 0
			keys := []string{"/r/a", "/r/b", "/r/c", "/r/d", "/r/e", "/r/f"}
			for step := range 150 {
				switch op := rng.IntN(20); {
				case op < 12: // add, as a commit of 1–3 files
					var pend []*undoEntry
					var blobs [][]byte
					for _, k := range rng.Perm(len(keys))[:1+rng.IntN(3)] {
						size := rng.IntN(150)
						blob := []byte(strings.Repeat("x", size))
						pend = append(pend, &undoEntry{
							Key: keys[k], Op: "write", Existed: size > 0, Size: int64(size),
							PrevVersion: Version(blob), AfterExists: true, AfterVersion: Version([]byte{byte(step)}),
							Pending: rng.IntN(2) == 0, // confirmed by add, from memory and in the log
						})
						blobs = append(blobs, blob)
					}
					offBefore := j.off
					kept, err := j.add(pend, blobs)
					if err != nil {
						t.Fatalf("step %d: add: %v", step, err)
					}
					if j.off < offBefore {
						compactions++
					}
					all := slices.Clone(model)
					for _, e := range pend {
						all = append(all, modelEntry{e.Seq, e.Key, e.Size})
					}
					dropped := modelEvictions(all, limits)
					model = slices.DeleteFunc(all, func(e modelEntry) bool { return dropped[e.seq] })
					for i, e := range pend {
						if kept[i] == dropped[e.Seq] {
							t.Fatalf("step %d: entry %d kept = %v, the model evicts it = %v", step, e.Seq, kept[i], dropped[e.Seq])
						}
					}
					if compactionDue(j) {
						t.Errorf("step %d: the log (%d bytes, %d live) was not compacted", step, j.off, j.liveLog)
					}
				case op < 17: // drop: the newest of a file, or any entry
					if j.len() == 0 {
						continue
					}
					var e *undoEntry
					if op < 15 {
						e = j.newest(model[rng.IntN(len(model))].key)
					} else {
						k := rng.IntN(j.len())
						for o := range j.live() {
							if k--; k < 0 {
								e = o
								break
							}
						}
					}
					if err := j.drop(e); err != nil {
						t.Fatalf("step %d: drop: %v", step, err)
					}
					model = slices.DeleteFunc(model, func(m modelEntry) bool { return m.seq == e.Seq })
				default: // reload, as a new process would
					if tc.limits.PerFile < 10 {
						limits.PerFile = tc.limits.PerFile + rng.IntN(3)
					}
					j = newUndoJournal(state, limits)
					j.compactAt = 1 << 10
					if err := j.tidy(); err != nil {
						t.Fatalf("step %d: tidy: %v", step, err)
					}
				}
				var got, want []int64
				for e := range j.live() {
					got = append(got, e.Seq)
				}
				for _, e := range model {
					want = append(want, e.seq)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("step %d: live entries differ from the model (-model +journal):\n%s", step, diff)
				}
				checkJournal(t, j)
				if t.Failed() {
					t.FailNow()
				}
			}
			t.Logf("%d compactions", compactions)
		})
	}
}

// TestUndoJournalCompactsOnCounts: the log is compacted as soon as at most
// a quarter of it is live, and the compacted log holds exactly the counted
// bytes (the header and the live entries' lines).
func TestUndoJournalCompactsOnCounts(t *testing.T) {
	t.Parallel()
	state := openStateRoot(t)
	j := newUndoJournal(state, UndoLimits{PerFile: 1, MaxEntries: 100, TotalBytes: 1 << 30})
	j.compactAt = 2 << 10
	compacted := 0
	for i := range 200 {
		off := j.off
		// One file rewritten: each add evicts the previous entry, so the
		// log is one live line and a growing tail of dead ones.
		if _, err := j.add([]*undoEntry{{Key: "/r/f", Op: "write", AfterExists: true, AfterVersion: Version([]byte{byte(i)})}}, [][]byte{nil}); err != nil {
			t.Fatal(err)
		}
		if compactionDue(j) {
			t.Fatalf("add %d: not compacted at %d bytes with %d live", i, j.off, j.liveLog)
		}
		if j.off < off {
			compacted++
			fi, err := state.Stat(undoLog)
			if err != nil {
				t.Fatal(err)
			}
			header := int64(len(`{"next":}`+"\n") + len(strconv.FormatInt(j.next, 10)))
			if fi.Size() != header+j.liveLog || fi.Size() != j.off {
				t.Fatalf("compacted log is %d bytes; counted %d + %d, applied %d", fi.Size(), header, j.liveLog, j.off)
			}
		}
	}
	if compacted == 0 {
		t.Fatal("never compacted")
	}
	checkJournal(t, j)
}

// TestUndoJournalSharedCounters: two workspaces on one state directory,
// with different limits, commit and undo in turn; after each step both
// journals hold the same entries and true counters, whether they caught
// up by reading the other's appends or by rereading its compacted log,
// and an add evicts by its own limits what the other's left over them.
func TestUndoJournalSharedCounters(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	ws := []*Workspace{
		openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state, Undo: UndoLimits{PerFile: 4, MaxEntries: 15}}),
		openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state, Undo: UndoLimits{PerFile: 2, MaxEntries: 15}}),
	}
	for _, w := range ws {
		w.journal.compactAt = 1 << 10
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	inodes := map[uint64]bool{}
	for step := range 120 {
		i := rng.IntN(2)
		w := ws[i]
		name := fmt.Sprintf("f%d", rng.IntN(5))
		committed := false
		if rng.IntN(4) == 0 {
			_, _ = w.Undo(name) // may have no history, or a conflict
		} else {
			commit(t, w, "write", Change{Path: name, Content: fmt.Appendf(nil, "%d", step)})
			committed = true
		}
		var seqs [2][]int64
		for k, o := range ws {
			if err := o.journal.refresh(); err != nil {
				t.Fatal(err)
			}
			checkJournal(t, o.journal)
			for e := range o.journal.live() {
				seqs[k] = append(seqs[k], e.Seq)
			}
		}
		inodes[ws[0].journal.ino] = true
		if diff := cmp.Diff(seqs[0], seqs[1]); diff != "" {
			t.Fatalf("step %d: the workspaces disagree (-first +second):\n%s", step, diff)
		}
		if committed {
			for key, es := range w.journal.byKey {
				if len(es) > w.limits.PerFile {
					t.Fatalf("step %d: after a commit by workspace %d, %s has %d entries (its PerFile is %d)", step, i, key, len(es), w.limits.PerFile)
				}
			}
			if n := w.journal.len(); n > 15 {
				t.Fatalf("step %d: %d entries", step, n)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	if len(inodes) < 2 {
		t.Errorf("the log was never compacted")
	}
}

// The killed-journal test: a child (this test binary, re-executed) adds
// entries with content and drops most of them again, with a small
// compaction threshold so kills land in compactions too, saying what it
// did; the parent SIGKILLs it at random moments, opens the workspace (which
// recovers the journal), and checks that every entry the child finished
// adding and did not start dropping is there with its own content, every
// entry it finished dropping is gone, no blob is left without an entry,
// and the counters are true.

const (
	journalChildEnv = "FSPLANE_WORKSPACE_JOURNAL_CHILD" // the state directory
	journalRootEnv  = "FSPLANE_WORKSPACE_JOURNAL_ROOT"
)

// journalBlob is the previous content journalChild records for entry
// seq: inline for odd seqs, in a blob for even ones.
func journalBlob(seq int64) []byte {
	b := []byte(fmt.Sprintf("content of /k/%d", seq))
	if seq%2 == 0 {
		b = bytes.Repeat(b, defaultInlineMax/len(b)+1)
	}
	return b
}

func journalChild() {
	say := func(format string, args ...any) { fmt.Fprintf(os.Stdout, format+"\n", args...) }
	w, err := Open(Options{Roots: []string{os.Getenv(journalRootEnv)}, StateDir: os.Getenv(journalChildEnv)})
	if err != nil {
		say("error %v", err)
		return
	}
	w.journal.compactAt = 4 << 10
	say("ready")
	for {
		err := w.locked("test", "", func() error {
			j := w.journal
			if err := j.refresh(); err != nil {
				return err
			}
			key := fmt.Sprintf("/k/%d", j.next)
			blob := journalBlob(j.next)
			e := &undoEntry{Key: key, Op: "write", Existed: true, Size: int64(len(blob)), PrevVersion: Version(blob), AfterExists: true}
			ino := j.ino
			if _, err := j.add([]*undoEntry{e}, [][]byte{blob}); err != nil {
				return err
			}
			say("added %d", e.Seq)
			if j.ino != ino && ino != 0 {
				say("compacted")
			}
			// Keep one in sixteen; now and then drop an older one, from
			// the middle of the journal.
			victim := e
			if e.Seq%16 == 0 {
				if victim = j.bySeq[e.Seq-32]; victim == nil || e.Seq%3 != 0 {
					return nil
				}
			}
			say("dropping %d", victim.Seq)
			if err := j.drop(victim); err != nil {
				return err
			}
			say("dropped %d", victim.Seq)
			return nil
		})
		if err != nil {
			say("error %v", err)
			return
		}
	}
}

func TestKilledJournalKeepsItsEntries(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	compactions := 0
	kills := 25
	if testing.Short() {
		kills = 10
	}
	added, dropping, dropped := map[int64]bool{}, map[int64]bool{}, map[int64]bool{}
	var maxAdded int64
	for k := range kills {
		lines := runJournalChild(t, root, state, rng)
		for _, line := range lines {
			var s int64
			switch {
			case strings.HasPrefix(line, "error"):
				t.Fatalf("kill %d: child: %s", k, line)
			case scan64(line, "added %d", &s):
				added[s] = true
				maxAdded = max(maxAdded, s)
			case scan64(line, "dropping %d", &s):
				dropping[s] = true
			case scan64(line, "dropped %d", &s):
				dropped[s] = true
			case line == "compacted":
				compactions++
			}
		}

		w := openTestWorkspace(t, Options{Roots: []string{root}, StateDir: state}) // recovery
		j := w.journal
		live := map[int64]bool{}
		for e := range j.live() {
			live[e.Seq] = true
			if !added[e.Seq] && e.Seq <= maxAdded {
				t.Fatalf("kill %d: entry %d is live but was neither added last nor reported", k, e.Seq)
			}
			b, err := j.readBlob(e)
			if err != nil || !bytes.Equal(b, journalBlob(e.Seq)) {
				t.Fatalf("kill %d: entry %d (%s) has content %q, %v", k, e.Seq, e.Key, b, err)
			}
		}
		for s := range added {
			switch {
			case dropped[s] && live[s]:
				t.Fatalf("kill %d: entry %d is back after it was dropped", k, s)
			case !dropped[s] && !dropping[s] && !live[s]:
				t.Fatalf("kill %d: entry %d is lost", k, s)
			}
		}
		blobs, err := os.ReadDir(filepath.Join(state, blobDir))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blobs {
			if s, err := strconv.ParseInt(b.Name(), 10, 64); err != nil || !live[s] {
				t.Fatalf("kill %d: blob %s has no entry", k, b.Name())
			}
		}
		if _, err := os.Stat(filepath.Join(state, undoLogTmp)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("kill %d: a compaction's temp is left: %v", k, err)
		}
		checkJournal(t, j)
		w.Close()
		// In flight at the kill, so either way; settled now.
		for s := range dropping {
			if !live[s] {
				dropped[s] = true
			}
			delete(dropping, s)
		}
		for s := range live {
			added[s] = true
		}
	}
	t.Logf("%d kills, %d entries added, %d dropped, %d compactions", kills, len(added), len(dropped), compactions)
}

// runJournalChild starts the journal child on state, SIGKILLs it after
// a random delay once it is ready, and returns what it said.
func runJournalChild(t *testing.T, root, state string, rng *rand.Rand) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), journalChildEnv+"="+state, journalRootEnv+"="+root)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "ready" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child said %q", sc.Text())
	}
	var lines []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
	}()
	// Log-uniform between 1 ms and 300 ms: an add and a drop take a few
	// fsyncs, so kills land in every step of many.
	time.Sleep(time.Duration(math.Exp(math.Log(1e6) + rng.Float64()*(math.Log(300e6)-math.Log(1e6)))))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, not by the kill: %q", err, lines)
	}
	return lines
}

func scan64(line, format string, n *int64) bool {
	_, err := fmt.Sscanf(line, format, n)
	return err == nil
}

// add records pend and evicts what the limits require, as a change made
// at once does (addPending, then confirm, fsynced).
func (j *undoJournal) add(pend []*undoEntry, blobs [][]byte) ([]bool, error) {
	kept, evicted, err := j.addPending(pend, blobs)
	if err != nil {
		return nil, err
	}
	var es []*undoEntry
	for i, ok := range kept {
		if ok {
			es = append(es, pend[i])
		}
	}
	return kept, j.confirm(es, evicted, nil, true)
}
