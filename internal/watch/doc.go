// Package watch reports file changes under directory trees to many
// watchers through one inotify instance.
//
// A Registry owns the inotify instance (created with the first watcher)
// and every Watcher. A watcher watches a directory (recursively or not)
// or a single file. Recursion is ours: each directory gets its own
// inotify watch, added during a walk at creation and whenever a directory
// appears (created or moved in), in which case the new directory is
// scanned right after its watch lands, so files made before that are
// reported as created; the events its watch queued before the scan
// listed it are dropped (bar writes and chmods of listed entries: see
// scanWindow), so no entry is reported removed, renamed or written that
// was not reported created. Excluded directories are never watched. Watches
// are shared: a directory watched by several watchers holds one inotify
// watch, released with its last watcher. A watcher that joins a watch
// gets only the events it queues from then on, so nothing from before
// the watcher started (bar a write or chmod queued last: the kernel may
// fold a later one into it). A watch belongs to a directory,
// not to a name: each records the directory's identity (device, inode),
// and a watch found on another directory than the one now at its path
// (removed while held open, replaced, moved unseen) is dropped. Which
// watch a directory has is the kernel's answer (inotify_add_watch returns
// the one it has), not its inode number's: a removed directory's number
// is soon reused, possibly while its last events still wait in the
// queue, and those never reach a watcher created since. Without
// Options.OpenDir, a root given through a symbolic link is watched at its
// target and reported under the given path.
//
// Watches are added by descriptor, never by path, so a path swapped for
// a symbolic link after it was checked cannot put a watch outside the
// tree. The directory a watcher is rooted at is opened through
// Options.OpenDir (fsplane's opens it inside a workspace root, through
// the root's *os.Root, refusing a link as its last component; it is
// reopened that way, and checked to be the same directory, whenever the
// registry needs it again); every directory below is opened relative to
// its parent's descriptor with O_DIRECTORY|O_NOFOLLOW; and
// inotify_add_watch is given /proc/self/fd/N, which the kernel resolves
// to the very directory the descriptor holds. No descriptor is kept
// between operations (an open directory would hold back its
// IN_DELETE_SELF). The identities compared, and the size, mtime and
// inode of events, are read the same way (fstatat relative to the
// directory's descriptor, AT_SYMLINK_NOFOLLOW); an entry that cannot be
// reached so gets no stat. Without /proc mounted, creating a watcher
// fails as unavailable: there is no fallback to paths.
//
// Kernel events become five types: create, write (IN_MODIFY), remove,
// rename and chmod (IN_ATTRIB). A move within the watched trees is one
// rename event (path = new path, old_path = old path, also when only
// the new name passes the filters; from a staging name, a create), paired by the
// inotify cookie (a MOVED_FROM that ends a read waits briefly for its
// MOVED_TO, which the kernel queues right after); a move out of a watcher's tree is a remove for it, a
// move in a create. A directory's move is reported also when the include
// globs leave its name out: it carries the files below it. A directory
// moved away and made again under its old name before the reader got to
// the first one's creation (whose listing then found the second one's
// entries) moves as a remove of the old name and a create of the new one,
// not a rename that would carry those entries along.
//
// An exchange (renameat2 with RENAME_EXCHANGE: the entries at a and b
// swap places at once), which the kernel reports as a move of a to b
// followed by one of b to a, is not two renames (those would carry both
// entries to a). A watcher that sees both names gets a remove of b, a
// rename of a to b, and a create of a, followed, when what is now at a
// is a directory, by creates of what it holds; one that sees one of the
// names gets a remove of it and a create of it (with what it holds). A
// client that applies them ends with what is on disk, files and
// directories either way round, without knowing of exchanges; the
// watches of the two trees trade places, a watcher rooted in either
// stopping (its directory moved away). A move there and back (mv a b;
// mv b a) reads alike: the identities of watched directories, or for
// other entries whether something is at b by the time the reader gets
// there, tell them apart; a move there and back told by the latter only
// is reported as the rename there, a remove of b and a create of a (see
// pairedLocked). To be paired so, a rename waits, like a MOVED_FROM, for
// the next event (briefly, when it ends a read).
//
// When a watcher's own directory is removed or moved
// away (a file watcher's: the file's directory), it reports its root
// removed (relative path ".") and stops. Each watcher debounces per path: an event waits
// Debounce in its watcher's queue, and later events of the same type for
// the same path, with no other event for that path in between (a rename
// is an event for both its names, and a remove or rename of a directory
// is one for every path below it), fold into
// it; events leave the queue in the order they arrived. Then each gets
// the next sequence number of its watcher (monotonic, never reused) and
// the file's current size, mtime and inode, and goes into the watcher's
// ring of the last RingSize events.
//
// Nothing is lost silently: when the kernel queue overflows, when a new
// directory cannot be watched (the max_user_watches budget), or when a
// reader's cursor falls behind the ring, the next poll reports overflow,
// which means "events were dropped; rescan the tree". A directory left
// unwatched for want of watches stays known to the registry, which
// watches it (and what it holds) as soon as watches are released (a
// directory removed, a watcher released or expired; and, for room freed
// outside the process, now and then) and then reports overflow again,
// since what changed there meanwhile went unreported; until then
// PollResult.Unwatched and Info.Unwatched count such directories (see
// starved.go). Overflow markers
// take a sequence number of their own, so a cursor moves past them, and
// a poll's page ends before one: the events of a page that reports
// overflow all came after the loss.
// After a kernel queue overflow the watches are brought up to date
// before the marker is set. A cursor past the latest sequence number
// (not one this watcher gave out) is reported as overflow too, with the
// latest sequence number as the cursor.
//
// Wait waits for an event on one exact path, a directory's too (not on
// the entries of a directory).
//
// Each ring grows as events arrive, doubling up to RingSize entries, so
// an idle watcher holds no ring; its numbering, wrap and overflow are
// those of a ring allocated whole.
//
// Limits: at most MaxWatchers distinct active watchers (a watcher
// created again with an identical config is shared and gains a
// subscriber), and the inotify watches of this process stay under 95% of
// fs.inotify.max_user_watches: a watcher that would need more fails at
// creation with a message that says how to proceed.
//
// Lifetimes. A watcher whose last subscriber releases it is dropped at
// once. One that stops by itself (its directory went) no longer counts
// against MaxWatchers but stays listed, as stopped with its reason, and
// readable, so that its client gets its last events and learns why it
// stopped. It is dropped when the first of these comes: a poll reads it
// to its end (when it has one subscriber: of several, the registry cannot
// tell which has read, so they get the grace period), StoppedGrace
// (default 5 minutes) passes since it stopped, or a new watcher needs
// room, stopped watchers then going oldest stop first so that no more
// than MaxWatchers watchers, stopped or not, hold events. An active
// watcher that nobody polls for IdleTimeout (default 10 minutes), with no
// poll in progress (a long poll, an event stream), expires: it stops and
// is dropped, bounding what a client that went away holds. Looking a
// watcher up to poll it, or sharing it, counts as a read; listing does
// not. The id of a dropped watcher answers NotFound with the reason (the
// last 1024 are remembered).
//
// The daemon's own writes go through the file system like anyone else's,
// so watchers see them too, as what they do to the tree: the entries it
// stages them under (Options.Staging: temps, part files, staged trees,
// backups) are never reported nor watched, whatever a watcher's filters,
// and renaming one into place is a create of the destination, also when
// it replaces a file (the kernel does not say whether it did). The
// package works on Linux; elsewhere creating a watcher fails as
// unavailable.
package watch
