package search

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// walkOptions configure one walk.
type walkOptions struct {
	hidden      bool // include dot-prefixed names
	ignoreFiles bool // honour .gitignore, .ignore and .git/info/exclude
	// ancestors are the ignore files above the root (with ignoreFiles).
	ancestors []AncestorIgnores
	// global is git's global excludes file (with ignoreFiles), applied
	// inside git repositories to globalPrefix+rel (see
	// Options.GlobalIgnore); nil when there is none.
	global       *ignoreList
	globalPrefix string
	// followLinks follows the symbolic links met in a listing, to files
	// and directories, when their target stays inside the root (rg -L):
	// for callers that may read everything in the root (see
	// Options.FollowLinks). Without it a link met in a listing is never
	// opened: it is skipped, or reported as itself with links.
	followLinks bool
	// links reports the symbolic links met in a listing as entries of
	// their own (not directories, never descended into, never opened),
	// whatever they point to; without it (and without followLinks) they
	// are skipped, as ripgrep skips them.
	links    bool
	maxDepth int  // 0: unlimited; n: entries at most n levels below the start
	workers  int  // 0: GOMAXPROCS
	wantDirs bool // directories are entries too, reported before their contents
	// filter decides, after admit, whether an entry is reported (emit)
	// and, for a directory, whether to list it (descend): the pattern of
	// the glob and find routes. rel is relative to the start. nil
	// reports every file and descends into every directory. It is called
	// from several goroutines.
	filter func(rel, name string, isDir bool) (emit, descend bool)
	// globs (rg -g, include/exclude) and types (rg -t) select entries
	// while a directory is listed (see walker.admit); nil selects all.
	globs *globFilter
	types *typeFilter
	// globPrefix is put before rel when the globs are matched (see
	// Options.GlobPrefix).
	globPrefix string
	// unhide: something may whitelist a hidden entry (an including glob,
	// a file type, a "!" line of the global excludes file).
	unhide bool
	// heldBytes, when set, tells how much memory a file's result holds
	// until it is emitted, for the back-pressure of maxHeld.
	heldBytes func(res any) int64
	// skipDirs are directories (relative to the root, not the start)
	// that are never entered or reported.
	skipDirs map[string]bool
}

const (
	nodeDir     uint8 = 1 << iota
	nodeEmit          // reported (files: processed; dirs: only with wantDirs)
	nodeDescend       // directory to list
	nodeViaLink       // a followed symbolic link (followLinks): opened through the os.Root
	nodeSymlink       // a symbolic link reported as itself (links): never opened
	nodeFailed        // a directory that could not be listed: its error is in walker.failed
)

// node is one file or directory of the walk. The goroutine that creates a
// node's children (a directory listing) or result (a file) publishes them
// with ready; the emitter reads them only after observing ready.
type node[T any] struct {
	name   string
	rel    string // relative to the start, "" for the start
	parent *node[T]
	flags  uint8
	depth  int32
	ready  atomic.Bool
	kids   []*node[T]
	res    T
	held   int64 // memory res holds until emitted (see walker.held)

	// Directory state. h is open from the start of the listing until the
	// last child task that needs it is done (refs).
	h     *dirHandle
	refs  atomic.Int32
	frame *ignoreFrame
	dev   uint64
	ino   uint64
}

func (n *node[T]) isDir() bool { return n.flags&nodeDir != 0 }

func (n *node[T]) release() {
	if n.refs.Add(-1) == 0 && n.h != nil {
		n.h.close()
		n.h = nil
	}
}

// fileRef is what a process function gets for one file.
type fileRef struct {
	Rel     string // relative to the walk start; "" when the start is this file
	Name    string
	dir     *dirHandle
	viaLink bool // a followed link: opened through the root
	symlink bool // a link reported as itself: see lstat
	root    *os.Root
	path    string   // path in the root, for files opened through it
	file    *os.File // the start, when it is a file
}

// errSymlink is open's error for a symbolic link reported as itself.
var errSymlink = errors.New("a symbolic link met while walking is not followed")

// open opens the file for reading, confined to the root. A symbolic link
// reported as itself is not opened (errSymlink): its target may be
// anything in the root, including what the caller keeps out of the walk.
func (f *fileRef) open() (fileHandle, error) {
	switch {
	case f.file != nil:
		return fileFromOS(f.file), nil
	case f.symlink:
		return fileHandle{}, &fs.PathError{Op: "open", Path: f.Rel, Err: errSymlink}
	case f.viaLink:
		of, err := openRegular(f.root, f.path)
		if err != nil {
			return fileHandle{}, err
		}
		return fileFromOS(of), nil
	}
	return f.dir.openFile(f.Name)
}

// ErrNotRegular is the error (wrapped) for a search of something that is
// neither a regular file nor a directory: a FIFO, a socket, a device.
var ErrNotRegular = errors.New("not a regular file or directory")

// openRegular opens name in root for reading if it is a regular file (after
// links). It opens without blocking: a FIFO or device would otherwise wait
// in open(2), which no context can interrupt.
func openRegular(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// maxHeld bounds the memory of results waiting for their turn to be
// emitted (see walker.held): a search whose early files are slow does not
// buffer the output of all the later ones.
const maxHeld = 4 << 20

// walkError is a problem with one path; the walk goes on.
type walkError struct {
	Rel string
	Err error
}

// maxWalkErrors bounds the errors a walk keeps.
const maxWalkErrors = 100

type walker[T any] struct {
	ctx      context.Context
	root     *os.Root
	startRel string // the start, relative to the root ("." for the root)
	o        *walkOptions
	// process runs on each reported file (nil: files need no work). local
	// is the worker's own slot for state it reuses from file to file.
	process func(f *fileRef, local *any) T

	mu      sync.Mutex
	cond    sync.Cond
	stack   []*node[T] // tasks, LIFO so work follows emission order
	pending int        // tasks pushed and not finished
	busy    int        // workers running a task
	// held is the memory (as o.heldBytes counts it) of results done but
	// not yet emitted; above maxHeld, idle workers wait for the emission.
	held atomic.Int64
	stop atomic.Bool

	// Emission runs on whichever goroutine holds emitMu, advancing a
	// depth-first cursor over the ready nodes (see advance).
	emitMu  sync.Mutex
	dirty   atomic.Bool
	emit    func(*node[T]) error
	cursor  []emitFrame[T]
	started bool
	start   *node[T]
	emitErr error
	done    chan struct{}
	doneSet bool
	// released: the emission brought held down from above maxHeld;
	// waiting workers must be woken (after emitMu is let go).
	released bool

	errMu   sync.Mutex
	errs    []walkError
	nErrors int
	// failed holds the errors of the directories that could not be
	// listed until the emission reaches them (see fail).
	failed map[*node[T]]error
}

// walkTree walks the tree at start (relative to root) and calls emit for
// every reported entry, one call at a time (never concurrently, from
// whichever goroutine completes the entry next in line), in path order:
// depth first, the entries of a directory sorted by name (so "a/b" comes
// before "a-c"), a directory before its contents. process, when not nil,
// runs on every reported file from up to o.workers goroutines and its
// result is what emit sees in n.res. An error from emit stops the walk and
// is returned; errors about single paths (directories that could not be
// listed) are collected in path order, up to where the walk stopped, and
// returned in errs. All descriptors are closed when walkTree returns.
func walkTree[T any](ctx context.Context, root *os.Root, start string, o *walkOptions,
	process func(f *fileRef, local *any) T, emit func(n *node[T]) error) (errs []walkError, total int, err error) {
	w := &walker[T]{ctx: ctx, root: root, o: o, process: process, emit: emit, done: make(chan struct{})}
	w.cond.L = &w.mu
	w.startRel = cleanRel(start)

	// Non-blocking, so that opening a FIFO (which would wait for a writer
	// forever, deaf to ctx) returns at once and is refused below.
	f, err := root.OpenFile(w.startRel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.IsDir() {
		defer f.Close()
		if !fi.Mode().IsRegular() {
			return nil, 0, &fs.PathError{Op: "search", Path: start, Err: ErrNotRegular}
		}
		n := &node[T]{name: path.Base(w.startRel), flags: nodeEmit}
		if process != nil {
			var local any
			n.res = process(&fileRef{Name: n.name, file: f, root: root}, &local)
		}
		return nil, 0, emit(n)
	}
	h, err := dirFromFile(root, w.startRel, f)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	startNode := &node[T]{name: path.Base(w.startRel), flags: nodeDir | nodeDescend, h: h}
	if o.ignoreFiles {
		startNode.frame = w.ancestorFrames()
	}
	if o.followLinks {
		startNode.dev, startNode.ino, _ = h.identity()
	}
	w.start = startNode
	w.push(startNode)

	workers := o.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.work()
		}()
	}
	w.advance()
	select {
	case <-w.done:
	case <-ctx.Done():
	}
	w.stop.Store(true)
	w.mu.Lock()
	w.cond.Broadcast()
	w.mu.Unlock()
	wg.Wait()
	w.emitMu.Lock() // pairs with the last emission
	err = w.emitErr
	w.emitMu.Unlock()
	if err == nil {
		err = ctx.Err()
	}
	return w.errs, w.nErrors, err
}

func cleanRel(p string) string {
	p = path.Clean(strings.TrimPrefix(p, "/"))
	if p == "" {
		return "."
	}
	return p
}

// rootPath is the path in the root of an entry rel below the start.
func (w *walker[T]) rootPath(rel string) string {
	if w.startRel == "." {
		return rel
	}
	return w.startRel + "/" + rel
}

// fail records that directory n could not be listed. The error counts
// when the emission reaches n, as a file's does: workers list
// directories ahead of it, and a search must count and name the same
// errors, in path order, up to where it stopped, whatever they did.
func (w *walker[T]) fail(n *node[T], err error) {
	w.errMu.Lock()
	if w.failed == nil {
		w.failed = map[*node[T]]error{}
	}
	w.failed[n] = err
	w.errMu.Unlock()
	n.flags |= nodeFailed // published by n's ready
}

// reportFailed counts the error of n, which the emission has reached,
// when fail recorded one.
func (w *walker[T]) reportFailed(n *node[T]) {
	if n.flags&nodeFailed == 0 {
		return
	}
	w.errMu.Lock()
	err := w.failed[n]
	delete(w.failed, n)
	w.errMu.Unlock()
	w.addErr(n.rel, err)
}

func (w *walker[T]) addErr(rel string, err error) {
	w.errMu.Lock()
	w.nErrors++
	if len(w.errs) < maxWalkErrors {
		w.errs = append(w.errs, walkError{Rel: rel, Err: err})
	}
	w.errMu.Unlock()
}

// push queues the tasks ns, which are in path order and contiguous in it
// (the children of one directory). The queue is kept in path order, the
// earliest on top, so workers take work in the order results are emitted:
// a directory listed late by one worker must not bury the earlier work
// another worker queued (then the emission would wait for work nobody
// does, while finished results pile up).
func (w *walker[T]) push(ns ...*node[T]) {
	w.mu.Lock()
	w.pending += len(ns)
	// The stack descends from bottom to top; everything at or above j is
	// earlier than ns and stays on top.
	st := w.stack
	j := sort.Search(len(st), func(i int) bool { return comparePaths(st[i].rel, ns[0].rel) < 0 })
	st = slices.Grow(st, len(ns))[:len(st)+len(ns)]
	copy(st[j+len(ns):], st[j:len(st)-len(ns)])
	for i, n := range ns {
		st[j+len(ns)-1-i] = n
	}
	w.stack = st
	w.mu.Unlock()
	if len(ns) == 1 {
		w.cond.Signal()
	} else {
		w.cond.Broadcast()
	}
}

func (w *walker[T]) work() {
	sc := &listScratch{buf: make([]byte, 32<<10)}
	var ref fileRef
	var local any
	for {
		w.mu.Lock()
		// Wait for work; and while the results done ahead of the
		// emission hold too much memory, let the emission catch up
		// (unless no worker is busy: then someone must go on).
		for (len(w.stack) == 0 && w.pending > 0) ||
			(len(w.stack) > 0 && w.busy > 0 && w.held.Load() > maxHeld && !w.stop.Load()) {
			w.cond.Wait()
		}
		if len(w.stack) == 0 {
			w.mu.Unlock()
			return
		}
		n := w.stack[len(w.stack)-1]
		w.stack[len(w.stack)-1] = nil
		w.stack = w.stack[:len(w.stack)-1]
		w.busy++
		w.mu.Unlock()

		if n.isDir() {
			w.list(n, sc)
		} else {
			if !w.stop.Load() && w.ctx.Err() == nil {
				ref = fileRef{Rel: n.rel, Name: n.name, dir: n.parent.h,
					viaLink: n.flags&nodeViaLink != 0, symlink: n.flags&nodeSymlink != 0, root: w.root}
				if ref.viaLink {
					ref.path = w.rootPath(n.rel)
				}
				n.res = w.process(&ref, &local)
				if w.o.heldBytes != nil {
					if n.held = w.o.heldBytes(&n.res); n.held > 0 {
						w.held.Add(n.held)
					}
				}
			}
			w.markReady(n)
			n.parent.release()
		}

		w.mu.Lock()
		w.pending--
		w.busy--
		wake := w.pending == 0 || w.held.Load() > maxHeld
		w.mu.Unlock()
		if wake {
			w.cond.Broadcast()
		}
	}
}

func (w *walker[T]) markReady(n *node[T]) {
	n.ready.Store(true)
	w.advance()
}

type emitFrame[T any] struct {
	n *node[T]
	i int
}

// advance emits every node that is ready in path order. Whoever makes a
// node ready calls it; one goroutine at a time does the emitting (the
// others only flag that there is more to do), so no goroutine waits for
// another and emit calls never overlap.
//
// The flag is set before the TryLock: a goroutine whose TryLock fails set
// it before the holder unlocks and re-reads it, so no ready node is left
// behind.
func (w *walker[T]) advance() {
	w.dirty.Store(true)
	for w.emitMu.TryLock() {
		w.dirty.Store(false)
		w.drain()
		wake := w.released
		w.released = false
		w.emitMu.Unlock()
		if wake {
			w.mu.Lock()
			w.cond.Broadcast()
			w.mu.Unlock()
		}
		if !w.dirty.Load() {
			return
		}
	}
}

// drain runs with emitMu held.
func (w *walker[T]) drain() {
	if w.doneSet {
		return
	}
	if !w.started {
		if !w.start.ready.Load() {
			return
		}
		w.started = true
		w.reportFailed(w.start)
		w.cursor = append(w.cursor, emitFrame[T]{n: w.start})
	}
	for len(w.cursor) > 0 {
		if w.stop.Load() {
			break
		}
		top := &w.cursor[len(w.cursor)-1]
		if top.i >= len(top.n.kids) {
			top.n.kids = nil
			w.cursor = w.cursor[:len(w.cursor)-1]
			continue
		}
		k := top.n.kids[top.i]
		if !k.ready.Load() {
			return
		}
		top.n.kids[top.i] = nil // emitted nodes can be collected
		top.i++
		if k.flags&nodeEmit != 0 {
			err := w.emit(k)
			if k.held > 0 {
				if w.held.Add(-k.held)+k.held > maxHeld {
					w.released = true
				}
				k.held = 0
			}
			var zero T
			k.res = zero // the slab outlives the node: drop what it holds
			if err != nil {
				w.emitErr = err
				break
			}
		}
		w.reportFailed(k)
		if k.isDir() && len(k.kids) > 0 {
			w.cursor = append(w.cursor, emitFrame[T]{n: k})
		}
	}
	w.doneSet = true
	close(w.done)
}

// listScratch is a worker's buffers for listing directories.
type listScratch struct {
	buf  []byte // getdents
	ents []rawEntry
	rels []byte
}

// list reads directory n, creates its children and queues their tasks.
func (w *walker[T]) list(n *node[T], sc *listScratch) {
	buf, ents := sc.buf, sc.ents[:0]
	defer func() { sc.ents = ents[:0] }()
	n.refs.Store(1) // the listing's own reference
	defer n.release()
	defer w.markReady(n)
	h := n.h
	if h == nil {
		var err error
		if n.flags&nodeViaLink != 0 {
			h, err = w.openLinkedDir(n)
		} else {
			h, err = n.parent.h.openSubdir(n.name)
		}
		if n.parent != nil {
			n.parent.release()
		}
		if err != nil {
			if !isVanished(err) {
				w.fail(n, err)
			}
			return
		}
		n.h = h
	}
	if w.stop.Load() || w.ctx.Err() != nil {
		return
	}
	if w.o.followLinks && n.parent != nil {
		dev, ino, err := h.identity()
		if err == nil {
			n.dev, n.ino = dev, ino
			for a := n.parent; a != nil; a = a.parent {
				if a.dev == dev && a.ino == ino {
					w.fail(n, errors.New("symbolic link loop: "+n.rel+" is an ancestor"))
					return
				}
			}
		}
	}
	ents, err := h.readEntries(buf, ents)
	if err != nil {
		w.fail(n, err)
		return
	}
	frame := n.frame
	if w.o.ignoreFiles {
		frame = w.loadIgnores(n, h, ents, frame)
	}
	depth := n.depth + 1
	canDescend := w.o.maxDepth <= 0 || int(depth) < w.o.maxDepth
	// The children's paths share one string and the nodes one slab: two
	// allocations per directory instead of two per entry.
	rels := sc.rels[:0]
	for _, e := range ents {
		if n.rel != "" {
			rels = append(rels, n.rel...)
			rels = append(rels, '/')
		}
		rels = append(rels, e.name...)
	}
	sc.rels = rels
	allRels := string(rels)
	relOff := 0
	slab := make([]node[T], 0, len(ents))
	kids := make([]*node[T], 0, len(ents))
	for _, e := range ents {
		// Ignore patterns and filters run per entry: a cancelled walk
		// must not wait for the rest of a large directory to be judged.
		if w.stop.Load() || w.ctx.Err() != nil {
			return
		}
		name := e.name
		relLen := len(name)
		if n.rel != "" {
			relLen += len(n.rel) + 1
		}
		rel := allRels[relOff : relOff+relLen]
		relOff += relLen
		if name == ".git" {
			continue
		}
		hidden := !w.o.hidden && name[0] == '.'
		if hidden && !w.o.unhide && (frame == nil || !frame.negates) {
			continue
		}
		typ := e.typ
		if typ == typeUnknown {
			t, err := h.lstatType(name)
			if err != nil {
				continue
			}
			typ = t
		}
		var flags uint8
		if typ == typeLink {
			// As ripgrep without -L: a link met while walking is not
			// followed, to a file no more than to a directory. Its
			// target was never checked the way a path the caller names
			// is (the state directory, the session's roots): it is
			// reported as what it is, or skipped.
			switch {
			case w.o.followLinks:
				fi, err := w.root.Stat(w.rootPath(rel))
				if err != nil {
					// Dangling, or leading out of the root: not part of the tree.
					continue
				}
				switch {
				case fi.IsDir():
					typ = typeDir
				case fi.Mode().IsRegular():
					typ = typeFile
				default:
					continue
				}
				flags |= nodeViaLink
			case w.o.links:
				flags |= nodeSymlink
			default:
				continue
			}
		}
		if typ != typeFile && typ != typeDir && typ != typeLink {
			continue
		}
		isDir := typ == typeDir
		if (isDir || typ == typeLink) && len(w.o.skipDirs) > 0 && w.o.skipDirs[w.rootPath(rel)] {
			continue
		}
		if !w.admit(frame, rel, name, isDir, hidden) {
			continue
		}
		emit, descend := true, isDir
		if w.o.filter != nil {
			emit, descend = w.o.filter(rel, name, isDir)
		}
		if isDir {
			flags |= nodeDir
			descend = descend && canDescend
			emit = emit && w.o.wantDirs
			if descend {
				flags |= nodeDescend
			}
			if !emit && !descend {
				continue
			}
		} else if !emit {
			continue
		}
		if emit {
			flags |= nodeEmit
		}
		slab = append(slab, node[T]{name: name, rel: rel, parent: n, flags: flags, depth: depth, frame: frame})
		kids = append(kids, &slab[len(slab)-1])
	}
	slices.SortFunc(kids, func(a, b *node[T]) int { return strings.Compare(a.name, b.name) })
	var tasks []*node[T]
	for _, k := range kids {
		switch {
		case k.isDir() && k.flags&nodeDescend != 0:
			tasks = append(tasks, k)
		case !k.isDir() && w.process != nil:
			tasks = append(tasks, k)
		default:
			k.ready.Store(true)
		}
	}
	n.kids = kids
	if len(tasks) > 0 {
		n.refs.Add(int32(len(tasks)))
		w.push(tasks...)
	}
}

func (w *walker[T]) openLinkedDir(n *node[T]) (*dirHandle, error) {
	f, err := w.root.Open(w.rootPath(n.rel))
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.IsDir() {
		f.Close()
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, err
	}
	return dirFromFile(w.root, w.rootPath(n.rel), f)
}

// isVanished reports errors from entries removed or replaced during the
// walk, which are not worth reporting.
func isVanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || isLoopErr(err)
}

// admit decides whether a listed entry is walked (reported, and for a
// directory listed in turn), in ripgrep's order (the ignore crate's
// Ignore::matched): a glob that matches decides alone, and when globs
// include, a file that matches none is skipped; otherwise the ignore
// files, then the file types, may skip the entry or whitelist it. A
// hidden entry (see walkOptions.hidden) is skipped unless one of them
// whitelisted it: rg -g '*.log' and rg -t log list .x.log, as does a
// "!.x.log" line of a .gitignore.
func (w *walker[T]) admit(frame *ignoreFrame, rel, name string, isDir, hidden bool) bool {
	if g := w.o.globs; g != nil {
		switch g.decide(w.o.globPrefix+rel, name, isDir) {
		case included:
			return true
		case ignored:
			return false
		}
		if !isDir && g.whitelist {
			return false
		}
	}
	white := false
	if frame != nil {
		switch w.ignoreDecision(frame, rel, name, isDir) {
		case ignored:
			return false
		case included:
			white = true
		}
	}
	if !isDir && w.o.types != nil {
		if !w.o.types.match(name) {
			return false
		}
		white = true
	}
	return !hidden || white
}
