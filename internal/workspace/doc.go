// Package workspace is the only part of fsplane that writes file content to
// disk. Every front and every operation reads and writes files through a
// *Workspace, so the guarantees below hold everywhere.
//
// # Confinement
//
// A workspace has one or more roots, each opened with os.OpenRoot. Relative
// paths resolve against the first root; absolute paths must lie inside a
// root. Paths are cleaned lexically first, as filepath.Clean does (so
// "dir/link/.." is "dir"), and a ".." that climbs out of the root is
// refused (outside_root) before any file is looked at. Symbolic
// links are then followed component by component (at most 40): a link whose
// target stays inside the same root is followed, one that leaves it is
// refused. That walk exists to give good messages and to let an edit of a
// link edit its target; the real guard is that every file access goes
// through the *os.Root with the resolved, link-free relative path, so a
// link swapped in between the walk and the access cannot escape either.
// The state directory is never part of the workspace, even inside a root:
// its journals steer recovery. It is recognised by identity (device and
// inode) as well as by path, so another spelling of it (another case on a
// case-insensitive file system, a bind mount) is refused too; a link to
// it is an entry like any other (it can be deleted or moved), but is not
// followed into it. A directory tree that holds it, or a root, however
// spelled, is not deleted: the tree is searched before anything goes.
//
// # Reads
//
// ReadText reads UTF-8 text up to 16 MiB (binary and other encodings are
// decode_error naming the alternative); ReadBytes reads raw bytes up to a
// caller-given limit. Every read returns the content's Version, an xxh3-128
// hash, which callers hand back as Change.ExpectedVersion.
//
// # Atomicity and durability
//
// Commit applies a set of changes all or nothing. A single change is an
// atomic durable write: a temp file beside the target (O_EXCL), the
// content, the old file's mode, owner (when permitted) and extended
// attributes, fsync, rename over the target, fsync of the directory. A file
// with several hard links is rewritten in place instead, so its names stay
// one file; that path, and every commit of several changes, runs as a
// journaled transaction (see Commit) that is rolled back or finished by the
// next recovery after a crash (at Open, and before every mutation). After a crash, a single atomic write leaves either
// the old or the new file, at worst with a stray ".<name>.fsplane-*.tmp"
// beside it, which the next Open removes (temps.go: each workspace logs the
// temps it creates, and Open sweeps the logs of workspaces that are gone);
// a transaction leaves no such files once recovered.
//
// # Concurrency
//
// A *Workspace is safe for concurrent use. Commit and Undo are serialised
// within the process and, through a flock on a lock file in the state
// directory, with every other process that shares the state directory.
// Every mutation also holds an exclusive flock on the directory of each
// file it changes (for a file in a directory it creates, the nearest
// existing ancestor), from before it reads what is on disk to after the
// rename and the undo journal; so an ExpectedVersion or ExpectAbsent check
// and the write it guards are atomic with respect to every fsplane
// process on the same files, whatever its state directory or root (nested
// roots lock the same directories). A create into a directory the commit
// made is renamed without replacing (Linux) and refused as stale_version
// if another writer created the file meanwhile. Where the file system
// does not support flock (NFS, some FUSE file systems), the directory
// locks are skipped and only processes sharing the state directory are
// excluded; lock.go has the details. Writers that bypass fsplane are not
// excluded: a change they make between the check and the rename is lost,
// as with any editor. Reads take no locks and may observe a transaction
// half applied; the all-or-nothing guarantee is about failures and
// crashes, not isolation.
//
// # Read-only files
//
// A file this process could not open for writing (chmod a-w, for an
// account other than root) is not replaced or deleted, though a rename
// over it would succeed: write, edit, patch, upload, copy or move onto it,
// Remove of it, a tree merged over it and Undo of a change to it are
// permission_denied, and nothing changes. Moving the file itself, removing
// a link to it and removing or moving a tree that holds it are not
// refused (readonly.go).
//
// # Directories
//
// List, Mkdir, Copy, Move and Remove work on directories and trees with
// the same confinement: every access goes through a root's *os.Root (or a
// directory opened through it), paths are resolved as above, and links
// inside a tree are never followed out of it. Move and Remove act on a
// symbolic link itself, never on what it points to; Copy follows a link
// given as its source or destination, like Commit. Copies and cross-root
// moves stage their result beside the destination (a temp file, or a temp
// directory for a tree) and rename it into place, so a destination appears
// complete or not at all. Remove, Move and the installation of a copy hold
// the same locks as Commit.
//
// # Ownership
//
// Change.Owner, and the owner given to Mkdir and Copy, own every file and
// directory the operation creates (LookupOwner resolves an account name);
// existing files keep their owner. Only a process running as root may name
// an account other than its own.
//
// # Undo
//
// Commit records the previous state of each changed file in a bounded,
// persistent journal in the state directory; Undo restores it (content,
// mode, and owner where the process may chown), and refuses when the file changed since the recorded
// edit, in content, existence, permission bits or owner; UndoHistory
// lists it. The record is written before the change is made, pending,
// and confirmed after it, so a process killed right after a change still
// leaves its record; the next process settles a pending record from the
// file (kept when the change was made, dropped when it was not; the
// owner the change left comes with the confirmation, so a settled record
// does not check it). An
// undo interrupted between restoring a file and dropping its record
// leaves the file as the record would restore it: the next Undo drops the
// record and reports it done (UndoResult.AlreadyUndone).
// Remove of a regular file or of a symbolic link goes through Commit and
// is recorded like any delete (Change.Entry: Undo makes the link again,
// pointing where it pointed). Copy records the file it creates or the
// content it overwrites. Move of a regular file records both paths as one
// change, which Undo of either path reverts as a whole. A tree merged
// into a directory (TreeWriter) records each file it adds or replaces.
// Changes of directories (mkdir, removing or moving a tree, a new tree)
// and Move of a link are not recorded, with one exception: the record of
// a file's creation counts the parent directories that change made for
// it, and Undo of the creation removes them again, deepest first, each
// only while it is empty (never one that existed before, nor one that
// holds anything now).
//
// Paths are those of a POSIX system; the package is written for Linux and
// builds on other Unix systems.
package workspace
