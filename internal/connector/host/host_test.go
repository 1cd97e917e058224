package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fsplane/fsplane/edit"
	"github.com/fsplane/fsplane/internal/connector/host/hosttest"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/workspace"
)

// recorder collects a host's events.
type recorder struct {
	mu      sync.Mutex
	events  []Event
	changed chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) add(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

func (r *recorder) all() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// wait returns the first event from index from on that matches, waiting
// up to d.
func (r *recorder) wait(t *testing.T, d time.Duration, from int, what string, match func(Event) bool) (Event, int) {
	t.Helper()
	deadline := time.After(d)
	for {
		r.mu.Lock()
		for i := from; i < len(r.events); i++ {
			if match(r.events[i]) {
				e := r.events[i]
				r.mu.Unlock()
				return e, i
			}
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no event %s within %s; events: %s", what, d, describe(r.all()))
		}
	}
}

func describe(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		switch e.Kind {
		case EventState:
			fmt.Fprintf(&b, "\n  state %s %s retry=%s err=%q", e.State, e.HostID, e.Retry, e.Err)
		case EventMode:
			fmt.Fprintf(&b, "\n  mode %s", e.Mode)
		case EventOp:
			fmt.Fprintf(&b, "\n  op %s %s %q -> %s (%s, delivered %v)", e.Op.ID, e.Op.Op, e.Op.Path, e.Op.Result, e.Op.Duration, e.Op.Delivered)
		case EventNotice:
			fmt.Fprintf(&b, "\n  notice %s", e.Message)
		}
	}
	return b.String()
}

type fixture struct {
	h    *Host
	hub  *hosttest.Hub
	root string
	rec  *recorder
	done chan error
}

// setup writes files into a new root, starts a host on it against hub and
// waits until the hub has its hello.
func setup(t *testing.T, hub *hosttest.Hub, mode proto.Mode, files map[string]string, tweak func(*Options)) *fixture {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := start(t, hub, mode, []string{root}, tweak)
	f.root = root
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hub.WaitConnected(ctx); err != nil {
		t.Fatalf("%v; events: %s", err, describe(f.rec.all()))
	}
	f.rec.wait(t, 5*time.Second, 0, "connected", func(e Event) bool { return e.State == Connected })
	return f
}

// start runs a host over roots without waiting for it.
func start(t *testing.T, hub *hosttest.Hub, mode proto.Mode, roots []string, tweak func(*Options)) *fixture {
	t.Helper()
	ws, err := workspace.Open(workspace.Options{Roots: roots, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	opts := Options{URL: hub.URL, Token: "tok", Name: "laptop", Mode: mode, Engine: ops.New(ws, ops.Options{}),
		Version: "test", OnEvent: rec.add, backoffBase: 10 * time.Millisecond, backoffMax: 100 * time.Millisecond}
	if tweak != nil {
		tweak(&opts)
	}
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &fixture{h: h, hub: hub, rec: rec, done: make(chan error, 1)}
	go func() { f.done <- h.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-f.done:
		case <-time.After(20 * time.Second):
			t.Error("Run did not return after its context ended")
		}
		ws.Close()
	})
	return f
}

func args(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// do runs op through the hub and returns its result.
func (f *fixture) do(t *testing.T, op *proto.Op) *proto.Result {
	t.Helper()
	// Generous: a 32 MiB transfer under the race detector on a busy
	// two-CPU machine takes most of a minute.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := f.hub.Do(ctx, op)
	if err != nil {
		t.Fatalf("%s %s: %v; events: %s", op.Op, op.Path, err, describe(f.rec.all()))
	}
	return r
}

// ok runs op, requires success and decodes the result into out.
func (f *fixture) ok(t *testing.T, op *proto.Op, out any) {
	t.Helper()
	r := f.do(t, op)
	if !r.OK {
		t.Fatalf("%s %s failed: %+v", op.Op, op.Path, r.Error)
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		t.Fatalf("%s result %s: %v", op.Op, r.Result, err)
	}
}

// fail runs op and requires an error with code.
func (f *fixture) fail(t *testing.T, op *proto.Op, code string) *proto.Error {
	t.Helper()
	r := f.do(t, op)
	if r.OK || r.Error == nil {
		t.Fatalf("%s %s succeeded (%s), want error %s", op.Op, op.Path, r.Result, code)
	}
	if r.Error.Code != code {
		t.Fatalf("%s %s failed with %+v, want code %s", op.Op, op.Path, r.Error, code)
	}
	return r.Error
}

// waitRunning waits until the host has op id in flight, so a test acts on
// an op known to be running rather than after a guessed delay.
func (f *fixture) waitRunning(t *testing.T, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.h.helloMu.Lock()
		s := f.h.live
		f.h.helloMu.Unlock()
		if s != nil {
			s.mu.Lock()
			_, ok := s.inflight[id]
			s.mu.Unlock()
			if ok {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("op %s was not running on the host within 10 s; events: %s", id, describe(f.rec.all()))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *fixture) file(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }

func TestHelloAndToken(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{Token: "tok"})
	extra := t.TempDir()
	root := t.TempDir()
	f := start(t, hub, "", []string{root, extra}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hello, err := hub.Hello(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := &proto.Hello{
		Type: proto.TypeHello, Protocol: proto.Protocol, Name: "laptop", Roots: []string{root, extra},
		Mode: proto.ReadOnly, Capabilities: proto.Capabilities{Ops: Ops, Transfer: 1, Features: []string{proto.FeatureUndoHeld}},
		Limits: proto.DefaultLimits, Version: "test",
	}
	if diff := cmp.Diff(want, hello); diff != "" {
		t.Errorf("hello (-want +got):\n%s", diff)
	}
	for _, op := range []string{"read", "stat", "list", "grep", "search", "write", "edit", "edit_lines", "insert", "patch", "undo"} {
		if !slices.Contains(hello.Capabilities.Ops, op) {
			t.Errorf("capabilities.ops %v lacks %s", hello.Capabilities.Ops, op)
		}
	}
	if got := hub.Authorizations(); len(got) == 0 || got[0] != "Bearer tok" {
		t.Errorf("Authorization headers %q, want [Bearer tok]", got)
	}
	e, _ := f.rec.wait(t, 5*time.Second, 0, "connected", func(e Event) bool { return e.State == Connected })
	if e.HostID != "h-1" || e.Mode != proto.ReadOnly {
		t.Errorf("connected event %+v, want host h-1 in read_only", e)
	}
	if s := f.h.Status(); s.State != Connected || s.HostID != "h-1" {
		t.Errorf("Status() = %+v", s)
	}
}

func TestWrongTokenFailsAtOnce(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{Token: "right"})
	f := start(t, hub, proto.ReadOnly, []string{t.TempDir()}, func(o *Options) { o.Token = "wrong" })
	select {
	case err := <-f.done:
		f.done <- err // for the cleanup
		if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "connector token required") {
			t.Errorf("Run = %v, want ErrUnauthorized with the status and the hub's message", err)
		}
		if strings.Contains(err.Error(), "wrong") {
			t.Errorf("the error %q shows the token", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run kept retrying a refused token")
	}
	f.rec.wait(t, time.Second, 0, "failed", func(e Event) bool { return e.State == Failed && strings.Contains(e.Err, "401") })
	if n := hub.Connections(); n != 0 {
		t.Errorf("%d WebSocket connections opened with a wrong token", n)
	}
}

func TestEveryOp(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{})
	f := setup(t, hub, proto.ReadWrite, map[string]string{
		"a.txt":     "one\ntwo\nthree\n",
		"dup.txt":   "x\nx\n",
		"src/m.go":  "package m\n\nfunc Hello() {}\n",
		"src/n.go":  "package m\n",
		"notes.md":  "hello world\n",
		"patch.txt": "alpha\nbeta\n",
	}, nil)

	var read ops.ReadResult
	f.ok(t, &proto.Op{Op: "read", Path: "a.txt", Caller: "c1", Args: args(t, ops.ReadRequest{LineFrom: 2, LineTo: 2})}, &read)
	if read.Content != "two\n" || read.TotalLines != 3 || read.Path != filepath.Join(f.root, "a.txt") {
		t.Errorf("read = %+v", read)
	}

	var st ops.StatResult
	f.ok(t, &proto.Op{Op: "stat", Path: "a.txt", Args: args(t, ops.StatRequest{FollowSymlinks: true})}, &st)
	if st.Size != 14 || st.IsDirectory || st.Version != read.Version {
		t.Errorf("stat = %+v", st)
	}

	var ls ops.ListResult
	f.ok(t, &proto.Op{Op: "list", Path: "src"}, &ls)
	if ls.Files != 2 || len(ls.Entries) != 2 {
		t.Errorf("list = %+v", ls)
	}

	var gr ops.GrepResult
	f.ok(t, &proto.Op{Op: "grep", Path: ".", Args: args(t, ops.GrepRequest{Pattern: "func Hel+o"})}, &gr)
	if gr.MatchCount != 1 || gr.Matches[0].File != filepath.Join(f.root, "src/m.go") || gr.Matches[0].LineNumber != 3 {
		t.Errorf("grep = %+v", gr)
	}

	var fd ops.FindResult
	f.ok(t, &proto.Op{Op: "search", Path: ".", Args: args(t, ops.FindRequest{Pattern: "*.go"})}, &fd)
	if diff := cmp.Diff([]string{filepath.Join(f.root, "src/m.go"), filepath.Join(f.root, "src/n.go")}, fd.Files); diff != "" {
		t.Errorf("search files (-want +got):\n%s", diff)
	}

	var wr ops.WriteResult
	f.ok(t, &proto.Op{Op: "write", Path: "new/b.txt", Args: args(t, ops.WriteRequest{Content: []byte("bee\n")})}, &wr)
	if !wr.Created || f.file(t, "new/b.txt") != "bee\n" {
		t.Errorf("write = %+v; file %q", wr, f.file(t, "new/b.txt"))
	}

	var ed ops.EditResult
	f.ok(t, &proto.Op{Op: "edit", Path: "notes.md", Args: args(t, ops.EditRequest{Old: "world", New: "there"})}, &ed)
	if !ed.Changed || f.file(t, "notes.md") != "hello there\n" {
		t.Errorf("edit = %+v; file %q", ed, f.file(t, "notes.md"))
	}

	// edit_lines needs the caller's fresh read: c1 read a.txt above.
	var el ops.LinesResult
	f.ok(t, &proto.Op{Op: "edit_lines", Path: "a.txt", Caller: "c1",
		Args: args(t, ops.EditLinesRequest{Edits: []edit.LineEdit{{From: 2, To: ptr(2), Content: ptr("TWO\n")}}})}, &el)
	if f.file(t, "a.txt") != "one\nTWO\nthree\n" {
		t.Errorf("edit_lines: file %q", f.file(t, "a.txt"))
	}

	var in ops.LinesResult
	f.ok(t, &proto.Op{Op: "insert", Path: "a.txt", Args: args(t, ops.InsertRequest{After: 0, Text: "zero\n"})}, &in)
	if f.file(t, "a.txt") != "zero\none\nTWO\nthree\n" {
		t.Errorf("insert: file %q", f.file(t, "a.txt"))
	}

	var pr ops.PatchResult
	f.ok(t, &proto.Op{Op: "patch", Args: args(t, ops.PatchRequest{
		Patch: "*** Begin Patch\n*** Update File: patch.txt\n@@\n alpha\n-beta\n+gamma\n*** End Patch\n"})}, &pr)
	if f.file(t, "patch.txt") != "alpha\ngamma\n" || !slices.Equal(pr.Modified, []string{"patch.txt"}) {
		t.Errorf("patch = %+v; file %q", pr, f.file(t, "patch.txt"))
	}

	var un ops.UndoResult
	f.ok(t, &proto.Op{Op: "undo", Path: "patch.txt"}, &un)
	if f.file(t, "patch.txt") != "alpha\nbeta\n" || un.Op == "" {
		t.Errorf("undo = %+v; file %q", un, f.file(t, "patch.txt"))
	}

	// Errors keep their codes, messages, hints and details.
	e := f.fail(t, &proto.Op{Op: "read", Path: "missing.txt"}, "not_found")
	if e.Message == "" {
		t.Errorf("not_found without a message: %+v", e)
	}
	f.fail(t, &proto.Op{Op: "edit", Path: "notes.md", Args: args(t, ops.EditRequest{Old: "absent", New: "x"})}, "no_match")
	e = f.fail(t, &proto.Op{Op: "edit", Path: "dup.txt", Args: args(t, ops.EditRequest{Old: "x", New: "y", Strict: true})}, "ambiguous_match")
	if diff := cmp.Diff(map[string]any{"lines": []any{1.0, 2.0}}, roundTrip(t, e.Details)); diff != "" {
		t.Errorf("ambiguous_match details (-want +got):\n%s", diff)
	}
	f.fail(t, &proto.Op{Op: "edit_lines", Path: "notes.md", Caller: "c2",
		Args: args(t, ops.EditLinesRequest{Edits: []edit.LineEdit{{From: 1, Content: ptr("x\n")}}})}, "must_read")
	f.fail(t, &proto.Op{Op: "list", Path: "a.txt"}, "invalid_target")
	f.fail(t, &proto.Op{Op: "grep", Path: ".", Args: args(t, ops.GrepRequest{Pattern: "("})}, "bad_request")
	e = f.fail(t, &proto.Op{Op: "frobnicate", Path: "a.txt"}, "bad_request")
	if e.Message != "unknown op: frobnicate" {
		t.Errorf("unknown op message %q", e.Message)
	}
	e = f.fail(t, &proto.Op{Op: "read", Path: "a.txt", Args: json.RawMessage(`{"LineFrom":"two"}`)}, "bad_request")
	if !strings.HasPrefix(e.Message, "invalid args for read") {
		t.Errorf("bad args message %q", e.Message)
	}

	// One log record per op, with its result and no content.
	f.rec.wait(t, 5*time.Second, 0, "the last record", func(e Event) bool {
		return e.Kind == EventOp && e.Op.Op == "read" && e.Op.Result == "bad_request"
	})
	var recs []*OpRecord
	for _, ev := range f.rec.all() {
		if ev.Kind == EventOp {
			recs = append(recs, ev.Op)
		}
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Op+" "+r.Path+" "+r.Result)
		if r.Duration <= 0 || !r.Delivered {
			t.Errorf("record %+v: want a duration and delivered", r)
		}
	}
	want := []string{
		"read a.txt ok", "stat a.txt ok", "list src ok", "grep . ok", "search . ok", "write new/b.txt ok",
		"edit notes.md ok", "edit_lines a.txt ok", "insert a.txt ok", "patch  ok", "undo patch.txt ok",
		"read missing.txt not_found", "edit notes.md no_match", "edit dup.txt ambiguous_match",
		"edit_lines notes.md must_read", "list a.txt invalid_target", "grep . bad_request",
		"frobnicate a.txt bad_request", "read a.txt bad_request",
	}
	// A record is emitted once its result is sent, so the next op's may
	// come first.
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("op records (-want +got):\n%s", diff)
	}
}

func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

var errEAGAIN = syscall.EAGAIN

func TestWireErrorDetails(t *testing.T) {
	t.Parallel()
	// An OS error keeps its errno; a retryable one says so.
	e := wireError("read", "a", fmt.Errorf("open: %w", &os.PathError{Op: "open", Path: "a", Err: errEAGAIN}))
	want := &proto.Error{Code: "io_error", Message: "resource temporarily unavailable",
		Details: map[string]any{"errno": 11, "errno_name": "EAGAIN", "retryable": true}}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("wireError (-want +got):\n%s", diff)
	}
}

func TestReadOnlyRefusesEveryWrite(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{})
	files := map[string]string{"a.txt": "one\ntwo\n"}
	f := setup(t, hub, proto.ReadOnly, files, nil)

	var read ops.ReadResult
	f.ok(t, &proto.Op{Op: "read", Path: "a.txt", Caller: "c"}, &read)
	lines := []edit.LineEdit{{From: 1, To: ptr(1), Content: ptr("ONE\n")}}
	patchText := "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"
	writes := []*proto.Op{
		{Op: "write", Path: "a.txt", Args: args(t, ops.WriteRequest{Content: []byte("x")})},
		{Op: "write", Path: "new.txt", Args: args(t, ops.WriteRequest{Content: []byte("x")})},
		{Op: "edit", Path: "a.txt", Args: args(t, ops.EditRequest{Old: "one", New: "ONE"})},
		{Op: "edit_lines", Path: "a.txt", Caller: "c", Args: args(t, ops.EditLinesRequest{Edits: lines})},
		{Op: "insert", Path: "a.txt", Args: args(t, ops.InsertRequest{After: 1, Text: "x\n"})},
		{Op: "patch", Args: args(t, ops.PatchRequest{Patch: patchText})},
		{Op: "patch", Path: "a.txt", Args: args(t, ops.PatchRequest{Patch: patchText})},
		{Op: "undo", Path: "a.txt"},
		// A request that claims a dry run on an op without one is still a write.
		{Op: "write", Path: "a.txt", Args: json.RawMessage(`{"Content":"eA==","DryRun":true}`)},
	}
	for _, op := range writes {
		e := f.fail(t, op, "read_only")
		if e.Message != "Writes are disabled on this host. Press F3 to switch to Read&Write." {
			t.Errorf("%s refused with message %q", op.Op, e.Message)
		}
	}
	if got := f.file(t, "a.txt"); got != files["a.txt"] {
		t.Errorf("a.txt changed to %q", got)
	}
	if _, err := os.Stat(filepath.Join(f.root, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("new.txt was created: %v", err)
	}
	// Dry runs write nothing and are allowed.
	var ed ops.EditResult
	f.ok(t, &proto.Op{Op: "edit", Path: "a.txt", Args: args(t, ops.EditRequest{Old: "one", New: "ONE", DryRun: true})}, &ed)
	if !ed.DryRun || !ed.Changed || !strings.Contains(ed.Snippet, "ONE") {
		t.Errorf("dry edit = %+v", ed)
	}
	var el ops.LinesResult
	f.ok(t, &proto.Op{Op: "edit_lines", Path: "a.txt", Caller: "c", Args: args(t, ops.EditLinesRequest{Edits: lines, DryRun: true})}, &el)
	var pr ops.PatchResult
	f.ok(t, &proto.Op{Op: "patch", Args: args(t, ops.PatchRequest{Patch: patchText, DryRun: true})}, &pr)
	if !pr.DryRun || pr.Diff == "" {
		t.Errorf("dry patch = %+v", pr)
	}
	if got := f.file(t, "a.txt"); got != files["a.txt"] {
		t.Errorf("a dry run changed a.txt to %q", got)
	}
	// Reads work.
	for _, op := range []*proto.Op{
		{Op: "stat", Path: "a.txt"}, {Op: "list", Path: "."},
		{Op: "grep", Path: ".", Args: args(t, ops.GrepRequest{Pattern: "two"})},
		{Op: "search", Path: ".", Args: args(t, ops.FindRequest{Pattern: "*.txt"})},
	} {
		var out map[string]any
		f.ok(t, op, &out)
	}
}

func TestSetModeReannounces(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{})
	f := setup(t, hub, proto.ReadOnly, map[string]string{"a.txt": "a\n"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if h, err := hub.Hello(ctx); err != nil || h.Mode != proto.ReadOnly {
		t.Fatalf("first hello %+v, %v", h, err)
	}
	write := func() *proto.Op {
		return &proto.Op{Op: "write", Path: "a.txt", Args: args(t, ops.WriteRequest{Content: []byte("b\n")})}
	}
	f.fail(t, write(), "read_only")

	for _, m := range []proto.Mode{proto.ReadWrite, proto.ReadOnly, proto.ReadWrite} {
		start := time.Now()
		if err := f.h.SetMode(m); err != nil {
			t.Fatal(err)
		}
		hctx, hcancel := context.WithTimeout(ctx, time.Second)
		h, err := hub.Hello(hctx)
		hcancel()
		if err != nil {
			t.Fatalf("no hello within a second of SetMode(%s): %v", m, err)
		}
		if h.Mode != m || h.Name != "laptop" || len(h.Roots) != 1 {
			t.Errorf("re-hello %+v, want mode %s", h, m)
		}
		t.Logf("SetMode(%s) reached the hub in %s", m, time.Since(start))
		if m == proto.ReadOnly {
			f.fail(t, write(), "read_only")
		} else {
			var wr ops.WriteResult
			f.ok(t, write(), &wr)
		}
	}
	if hub.Connections() != 1 {
		t.Errorf("SetMode reconnected: %d connections", hub.Connections())
	}
	f.rec.wait(t, time.Second, 0, "mode read_write", func(e Event) bool { return e.Kind == EventMode && e.Mode == proto.ReadWrite })
	if err := f.h.SetMode("god"); err == nil {
		t.Error("SetMode accepted an invalid mode")
	}
	if f.h.Mode() != proto.ReadWrite {
		t.Errorf("Mode() = %s", f.h.Mode())
	}
}

// slowTree writes files whose grep takes about 20 ms each on one CPU
// (ten times that under the race detector): lines that RE2 must scan with
// a counted repetition and that never match. A search stops between
// files when cancelled; 3000 files take half a minute or more on two
// CPUs.
func slowTree(t *testing.T, root string, files int) {
	t.Helper()
	line := strings.Repeat("a", 3000) + " 1\n"
	content := strings.Repeat(line, 4)
	for i := range files {
		p := filepath.Join(root, "slow", fmt.Sprintf("d%02d", i%30), fmt.Sprintf("f%04d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const slowPattern = "[a-z]{1,100}[0-9]"

func TestCancelStopsALongGrep(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"cancel", "timeout"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			hub := hosttest.Start(t, hosttest.Options{})
			f := setup(t, hub, proto.ReadOnly, nil, nil)
			slowTree(t, f.root, 3000)
			op := &proto.Op{OpID: "long", Op: "grep", Path: "slow", Args: args(t, ops.GrepRequest{Pattern: slowPattern, MaxFileSize: "0"})}
			if how == "timeout" {
				op.TimeoutMS = 300
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, _, err := hub.Start(ctx, op)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond)
			sent := time.Now()
			if how == "cancel" {
				if err := hub.Cancel(ctx, "long"); err != nil {
					t.Fatal(err)
				}
			}
			// The op ends with its context: a grep that ignored the
			// cancel would finish (minutes later) and be recorded "ok".
			want := map[string]string{"cancel": ResultCancelled, "timeout": ResultTimeout}[how]
			e, _ := f.rec.wait(t, 30*time.Second, 0, "op record", func(e Event) bool { return e.Kind == EventOp })
			if e.Op.Result != want || e.Op.Delivered {
				t.Errorf("record %+v, want %s, not delivered", e.Op, want)
			}
			// It stops within the scan of the files in progress: well
			// under a second normally; generous for a loaded race run.
			d := time.Since(sent)
			t.Logf("the grep stopped %s after the %s", d, how)
			if d > 15*time.Second {
				t.Errorf("the grep ran on for %s after the %s", d, how)
			}
			// No result is sent for it; the connection still serves.
			var st ops.StatResult
			f.ok(t, &proto.Op{Op: "stat", Path: "slow"}, &st)
			select {
			case r := <-res:
				t.Errorf("a result arrived for the %s op: %+v", how, r)
			default:
			}
			if s := hub.Stray(); len(s) != 0 {
				t.Errorf("stray results: %+v", s)
			}
		})
	}
}

func TestLargeTransfers(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{})
	f := setup(t, hub, proto.ReadWrite, nil, nil)

	// A 32 MiB write arrives as a transfer (its op is ~43 MiB of JSON).
	big := bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyz\n"), 32<<20/27+1)[:32<<20]
	sum := sha256.Sum256(big)
	var wr ops.WriteResult
	f.ok(t, &proto.Op{Op: "write", Path: "big.txt", Args: args(t, ops.WriteRequest{Content: big})}, &wr)
	onDisk, err := os.ReadFile(filepath.Join(f.root, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := sha256.Sum256(onDisk); got != sum || wr.Bytes != len(big) {
		t.Fatalf("32 MiB write: sha256 %s, want %s (%d bytes reported)", hex.EncodeToString(got[:]), hex.EncodeToString(sum[:]), wr.Bytes)
	}

	// A read result over the 1 MiB message limit comes back as a
	// transfer: the hub's Conn cannot read a text frame that large, so the
	// result arriving at all proves it. ops.Read caps text at 16 MiB.
	text := big[:15<<20]
	if err := os.WriteFile(filepath.Join(f.root, "15m.txt"), text, 0o644); err != nil {
		t.Fatal(err)
	}
	var rd ops.ReadResult
	f.ok(t, &proto.Op{Op: "read", Path: "15m.txt"}, &rd)
	if got, want := sha256.Sum256([]byte(rd.Content)), sha256.Sum256(text); got != want {
		t.Fatalf("15 MiB read: sha256 %x, want %x", got, want)
	}
	// The 32 MiB file is over the text read limit: a clear error.
	f.fail(t, &proto.Op{Op: "read", Path: "big.txt"}, "too_large")
}

func TestReconnectWithBackoff(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{})
	f := setup(t, hub, proto.ReadWrite, map[string]string{"a.txt": "a\n"}, func(o *Options) {
		o.backoffBase, o.backoffMax = 50*time.Millisecond, 400*time.Millisecond
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := hub.Hello(ctx); err != nil {
		t.Fatal(err)
	}
	// Refuse the next attempts, so the backoff grows, then drop the
	// connection.
	hub.Refuse(4)
	n := len(f.rec.all())
	hub.Drop()
	f.rec.wait(t, 10*time.Second, n, "reconnecting", func(e Event) bool { return e.State == Reconnecting })
	// A mode set while disconnected goes out with the next hello.
	if err := f.h.SetMode(proto.ReadOnly); err != nil {
		t.Errorf("SetMode while disconnected: %v", err)
	}
	var retries []time.Duration
	from := n
	for i := range 5 {
		e, idx := f.rec.wait(t, 10*time.Second, from, "reconnecting", func(e Event) bool { return e.State == Reconnecting })
		retries = append(retries, e.Retry)
		if c := backoffCap(i, 50*time.Millisecond, 400*time.Millisecond); e.Retry < 0 || e.Retry >= c {
			t.Errorf("attempt %d waits %s, want [0, %s)", i, e.Retry, c)
		}
		if i > 0 && !strings.Contains(e.Err, "503") {
			t.Errorf("attempt %d: reason %q, want the hub's 503", i, e.Err)
		}
		from = idx + 1
	}
	t.Logf("backoff waits: %v", retries)
	hello, err := hub.Hello(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if hello.Mode != proto.ReadOnly || hello.Name != "laptop" {
		t.Errorf("re-hello after reconnecting: %+v, want the mode set while disconnected", hello)
	}
	f.rec.wait(t, 10*time.Second, from, "connected again", func(e Event) bool { return e.State == Connected && e.HostID == "h-2" })
	if err := f.h.SetMode(proto.ReadWrite); err != nil {
		t.Fatal(err)
	}
	// The attempts were spaced by at least the announced waits.
	attempts := hub.AttemptTimes()
	if len(attempts) != 6 {
		t.Fatalf("%d upgrade attempts, want 6 (1 + 4 refused + 1)", len(attempts))
	}
	for i := 1; i < 6; i++ {
		if gap := attempts[i].Sub(attempts[i-1]); i > 1 && gap < retries[i-1] {
			t.Errorf("attempt %d came %s after the previous one; the host announced a wait of %s", i, gap, retries[i-1])
		}
	}
	var wr ops.WriteResult
	f.ok(t, &proto.Op{Op: "write", Path: "a.txt", Args: args(t, ops.WriteRequest{Content: []byte("b\n")})}, &wr)
}

func TestBackoffCaps(t *testing.T) {
	t.Parallel()
	var got []time.Duration
	for n := range 8 {
		got = append(got, backoff(n, BaseBackoff, MaxBackoff, func() float64 { return 0.999999 }).Round(time.Millisecond))
	}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("backoff ceilings (-want +got):\n%s", diff)
	}
	if d := backoff(3, BaseBackoff, MaxBackoff, func() float64 { return 0 }); d != 0 {
		t.Errorf("full jitter's low end = %s, want 0", d)
	}
	if d := backoff(1000, BaseBackoff, MaxBackoff, func() float64 { return 0.5 }); d != 2500*time.Millisecond {
		t.Errorf("backoff(1000) = %s, want 2.5s (no overflow)", d)
	}
}

func TestInFlightOpsAreDroppedAtDisconnect(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{})
	f := setup(t, hub, proto.ReadOnly, nil, nil)
	slowTree(t, f.root, 3000)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := hub.Hello(ctx); err != nil {
		t.Fatal(err)
	}
	_, done, err := hub.Start(ctx, &proto.Op{OpID: "long", Op: "grep", Path: "slow", Args: args(t, ops.GrepRequest{Pattern: slowPattern})})
	if err != nil {
		t.Fatal(err)
	}
	f.waitRunning(t, "long")
	hub.Drop()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not end after Drop")
	}
	// The grep notices its context between files: under the race
	// detector on a loaded machine that may take a while (a guard for a
	// hang, not a measure of speed).
	e, _ := f.rec.wait(t, 2*time.Minute, 0, "dropped op", func(e Event) bool { return e.Kind == EventOp && e.Op.ID == "long" })
	if e.Op.Result != ResultDropped || e.Op.Delivered {
		t.Errorf("record %+v, want dropped", e.Op)
	}
	if _, err := hub.Hello(ctx); err != nil {
		t.Fatal(err)
	}
	if err := hub.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	// The dropped op's record (awaited above) is the last thing it does,
	// after any result it would send; the host sends in order and the hub
	// reads in order. So a result of it on this connection would have
	// reached Stray before the stat's result: no waiting is needed.
	var st ops.StatResult
	f.ok(t, &proto.Op{Op: "stat", Path: "slow"}, &st)
	if s := hub.Stray(); len(s) != 0 {
		t.Errorf("the dropped op was answered on the new connection: %+v", s)
	}
	n := 0
	for _, ev := range f.rec.all() {
		if ev.Kind == EventOp && ev.Op.ID == "long" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the dropped op ran %d times", n)
	}
}

func TestPathEscapesRefused(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{})
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := setup(t, hub, proto.ReadWrite, map[string]string{"in.txt": "in\n"}, nil)
	if err := os.Symlink(outside, filepath.Join(f.root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(f.root, "secret-link")); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(f.root, secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{secret, rel, "../" + filepath.Base(outside) + "/secret.txt", "out/secret.txt", "secret-link", "/etc/passwd"} {
		e := f.fail(t, &proto.Op{Op: "read", Path: p}, "outside_root")
		if strings.Contains(e.Message, "secret\n") {
			t.Errorf("read %s leaked content: %q", p, e.Message)
		}
		f.fail(t, &proto.Op{Op: "write", Path: p, Args: args(t, ops.WriteRequest{Content: []byte("pwned\n")})}, "outside_root")
		f.fail(t, &proto.Op{Op: "stat", Path: p, Args: args(t, ops.StatRequest{FollowSymlinks: true})}, "outside_root")
	}
	f.fail(t, &proto.Op{Op: "patch", Args: args(t, ops.PatchRequest{Patch: "*** Begin Patch\n*** Add File: out/new.txt\n+x\n*** End Patch\n"})}, "outside_root")
	f.fail(t, &proto.Op{Op: "grep", Path: "out", Args: args(t, ops.GrepRequest{Pattern: "secret"})}, "outside_root")
	if b, _ := os.ReadFile(secret); string(b) != "secret\n" {
		t.Errorf("the outside file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was created outside the root: %v", err)
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{TLS: true})
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(hub.CAPEM()) {
		t.Fatal("no CA")
	}
	t.Run("trusted", func(t *testing.T) {
		t.Parallel()
		f := setup(t, hub, proto.ReadOnly, map[string]string{"a.txt": "a\n"}, func(o *Options) {
			o.URL = strings.Replace(hub.URL, "https://", "wss://", 1)
			o.TLS = &tls.Config{RootCAs: pool}
		})
		var rd ops.ReadResult
		f.ok(t, &proto.Op{Op: "read", Path: "a.txt"}, &rd)
	})
	t.Run("untrusted", func(t *testing.T) {
		t.Parallel()
		f := start(t, hub, proto.ReadOnly, []string{t.TempDir()}, nil)
		select {
		case err := <-f.done:
			f.done <- err
			if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "x509") {
				t.Errorf("Run = %v, want ErrUntrusted naming the x509 reason", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run kept retrying an untrusted certificate")
		}
	})
	t.Run("no skipping verification", func(t *testing.T) {
		t.Parallel()
		ws, err := workspace.Open(workspace.Options{Roots: []string{t.TempDir()}, StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		_, err = New(Options{URL: hub.URL, Name: "x", Engine: ops.New(ws, ops.Options{}), TLS: &tls.Config{InsecureSkipVerify: true}})
		if err == nil {
			t.Error("New accepted InsecureSkipVerify")
		}
	})
}

// TestHTTPSToAPlainHub: an https URL for a hub without TLS stops Run with
// what to do, instead of retrying the same handshake forever.
func TestHTTPSToAPlainHub(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{})
	f := start(t, hub, proto.ReadOnly, []string{t.TempDir()}, func(o *Options) {
		o.URL = strings.Replace(hub.URL, "http://", "https://", 1)
	})
	select {
	case err := <-f.done:
		f.done <- err
		if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "use http://") {
			t.Errorf("Run = %v, want ErrProtocol saying to use http:// or TLS on the hub", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run kept retrying https against a plain HTTP hub")
	}
}

func TestHubMessagesBecomeNotices(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{})
	f := setup(t, hub, proto.ReadOnly, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hub.Send(ctx, &proto.ErrorMsg{Code: "bad\x1b[31m", Message: "oops\x1b]0;pwned\x07"}); err != nil {
		t.Fatal(err)
	}
	e, _ := f.rec.wait(t, 5*time.Second, 0, "notice", func(e Event) bool { return e.Kind == EventNotice })
	if e.Message != "hub error bad?[31m: oops?]0;pwned?" {
		t.Errorf("notice %q, want control characters replaced", e.Message)
	}
}

func TestDuplicateOpID(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{})
	f := setup(t, hub, proto.ReadOnly, nil, nil)
	slowTree(t, f.root, 50)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, _, err := hub.Start(ctx, &proto.Op{OpID: "same", Op: "grep", Path: "slow", Args: args(t, ops.GrepRequest{Pattern: slowPattern})}); err != nil {
		t.Fatal(err)
	}
	f.waitRunning(t, "same")
	e := f.fail(t, &proto.Op{OpID: "same", Op: "stat", Path: "."}, "bad_request")
	if !strings.Contains(e.Message, "duplicate op_id") {
		t.Errorf("message %q", e.Message)
	}
	// Ops run concurrently: a stat is answered while the grep runs.
	start := time.Now()
	var st ops.StatResult
	f.ok(t, &proto.Op{OpID: "other", Op: "stat", Path: "."}, &st)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a stat took %s behind a long grep", d)
	}
	if evs := f.rec.all(); slices.ContainsFunc(evs, func(e Event) bool { return e.Kind == EventOp && e.Op.ID == "same" && e.Op.Op == "grep" }) {
		t.Error("the grep finished before the stat: the test proves nothing")
	}
	if err := hub.Cancel(ctx, "same"); err != nil {
		t.Fatal(err)
	}
}

func TestHubURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want, err string }{
		{in: "http://127.0.0.1:18091", want: "ws://127.0.0.1:18091/v2/connector"},
		{in: "https://hub.example/", want: "wss://hub.example/v2/connector"},
		{in: "wss://hub.example/fsplane", want: "wss://hub.example/fsplane/v2/connector"},
		{in: "ws://h:1/v2/connector", want: "ws://h:1/v2/connector"},
		{in: " http://h:1/v2/connector?x=1 ", want: "ws://h:1/v2/connector?x=1"},
		// A trailing slash does not make the endpoint a prefix.
		{in: "http://h:1/v2/connector/", want: "ws://h:1/v2/connector"},
		{in: "http://h:1/p/v2/connector//?x=1", want: "ws://h:1/p/v2/connector?x=1"},
		{in: "http://h:1//", want: "ws://h:1/v2/connector"},
		{in: "http://h:1/a%2Fb/", want: "ws://h:1/a%2Fb/v2/connector"},
		{in: "ftp://h", err: "use http://"},
		{in: "h:1", err: "use http://"},
		// Without a scheme, the error says which URL to use instead.
		{in: "127.0.0.1:18710", err: `hub URL "127.0.0.1:18710" needs a scheme: use http://127.0.0.1:18710 (or https://)`},
		{in: "localhost:18710", err: "needs a scheme: use http://localhost:18710 (or https://)"},
		{in: "hub.example/fsplane", err: "needs a scheme: use http://hub.example/fsplane (or https://)"},
		{in: "http:h", err: "no host"},
		{in: "http://", err: "no host"},
		// A port alone, or one no dial can use, is refused at once.
		{in: "http://:18091", err: `hub URL "http://:18091" has no host`},
		{in: "http://127.0.0.1:99999", err: `hub URL "http://127.0.0.1:99999": port 99999 is not a port number (1 to 65535)`},
		{in: "ws://[::1]:0/", err: "port 0 is not a port number"},
		{in: "http://[::1]:65535/", want: "ws://[::1]:65535/v2/connector"},
		{in: "https://user:pw@h", err: "credentials"},
	} {
		got, err := HubURL(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("HubURL(%q) = %q, %v; want an error containing %q", tt.in, got, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("HubURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("HubURL(%q) error shows the password: %v", tt.in, err)
		}
	}
}

func TestNewValidates(t *testing.T) {
	t.Parallel()
	ws, err := workspace.Open(workspace.Options{Roots: []string{t.TempDir()}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	eng := ops.New(ws, ops.Options{})
	for _, o := range []Options{
		{URL: "http://h", Name: "n"},
		{URL: "http://h", Engine: eng},
		{URL: "http://h", Name: "n", Engine: eng, Mode: "admin"},
		{URL: "gopher://h", Name: "n", Engine: eng},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
	h, err := New(Options{URL: "http://h", Name: "n", Engine: eng})
	if err != nil || h.Mode() != proto.ReadOnly {
		t.Errorf("New with no mode: %v, mode %v; want read_only", err, h.Mode())
	}
}

// TestDialGathersWrites: the host's WebSocket runs over a FrameConn, so
// each message leaves in one write (plain and TLS); TestEveryOp and
// TestLargeTransfers run every op and 32 MiB transfers over it.
func TestDialGathersWrites(t *testing.T) {
	t.Parallel()
	plain := hosttest.Start(t, hosttest.Options{})
	secure := hosttest.Start(t, hosttest.Options{TLS: true})
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(secure.CAPEM()) {
		t.Fatal("no CA")
	}
	for _, tc := range []struct {
		name, url string
		tls       *tls.Config
	}{
		{"ws", plain.URL, nil},
		{"wss", strings.Replace(secure.URL, "https://", "wss://", 1), &tls.Config{RootCAs: pool}},
	} {
		ws, err := workspace.Open(workspace.Options{Roots: []string{t.TempDir()}, StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		h, err := New(Options{URL: tc.url, Token: "tok", Name: "x", Engine: ops.New(ws, ops.Options{}), TLS: tc.tls})
		if err != nil {
			t.Fatal(err)
		}
		conn, fc, err := h.dial(context.Background())
		if err != nil {
			t.Fatalf("%s: dial: %v", tc.name, err)
		}
		conn.CloseNow()
		if fc == nil {
			t.Errorf("%s: dial made no FrameConn", tc.name)
		}
	}
}

// TestDownloadOverTheLimitIsRefused: a file the transfer cannot carry is
// refused with too_large before any result, at the protocol's 256 MiB
// limit (a sparse file) and at a lower one the host sets; one within the
// limit is answered, and so is a range of the big file within it (the
// limit is on what is sent), while a malformed range is bad_request.
func TestDownloadOverTheLimitIsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		limit int64 // the host's max_transfer_bytes; 0: the default
		size  int64
	}{
		{"default limit", 0, proto.DefaultLimits.MaxTransferBytes + 1},
		{"host limit", 1 << 20, 1<<20 + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hub := hosttest.Start(t, hosttest.Options{})
			f := setup(t, hub, proto.ReadOnly, map[string]string{"small.bin": "abc"}, func(o *Options) {
				o.Limits = proto.Limits{MaxTransferBytes: tc.limit}
			})
			big, err := os.Create(filepath.Join(f.root, "big.bin"))
			if err != nil {
				t.Fatal(err)
			}
			if err := big.Truncate(tc.size); err != nil {
				t.Fatal(err)
			}
			big.Close()
			e := f.fail(t, &proto.Op{Op: "download", Path: "big.bin"}, "too_large")
			if !strings.Contains(e.Message, fmt.Sprint(tc.size)) {
				t.Errorf("message %q does not give the size", e.Message)
			}
			var res proto.DownloadResult
			f.ok(t, &proto.Op{Op: "download", Path: "small.bin"}, &res)
			if res.Size != 3 || res.Range != nil {
				t.Errorf("small.bin: %+v", res)
			}
			res = proto.DownloadResult{}
			f.ok(t, &proto.Op{Op: "download", Path: "big.bin", Args: json.RawMessage(`{"Range":{"First":1000,"Last":1099}}`)}, &res)
			if res.Size != tc.size || res.Range == nil || *res.Range != (proto.ByteRange{Offset: 1000, Length: 100}) {
				t.Errorf("a range of big.bin: %+v (range %+v), want 100 bytes from 1000", res, res.Range)
			}
			f.fail(t, &proto.Op{Op: "download", Path: "big.bin", Args: json.RawMessage(`{"Range":{"First":5,"Last":4}}`)}, "bad_request")
		})
	}
}

// TestQueuedOpDoesNotHoldTheReader: with every op slot taken, an op waits
// for one on its own goroutine; on the reading goroutine it would hold up
// everything behind it (a cancel, a pong) a handoff budget per queued op.
func TestQueuedOpDoesNotHoldTheReader(t *testing.T) {
	t.Parallel()
	hub := hosttest.Start(t, hosttest.Options{})
	f := setup(t, hub, proto.ReadOnly, map[string]string{"a.txt": "a\n"}, nil)
	for range MaxConcurrentOps {
		f.h.opSlots <- struct{}{}
	}
	f.h.helloMu.Lock()
	s := f.h.live
	f.h.helloMu.Unlock()
	returned := make(chan struct{})
	go func() {
		s.startOp(&proto.Op{OpID: "queued", Op: proto.OpStat, Path: "a.txt"})
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("startOp with every slot taken did not return: it waits for a slot on the reading goroutine")
	}
	for range MaxConcurrentOps {
		<-f.h.opSlots
	}
	e, _ := f.rec.wait(t, 10*time.Second, 0, "the queued op", func(e Event) bool { return e.Kind == EventOp && e.Op.ID == "queued" })
	if e.Op.Result != ResultOK {
		t.Errorf("the queued op ended %s, want ok once a slot was free", e.Op.Result)
	}
}
