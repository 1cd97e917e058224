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
// its journals steer recovery.
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
// next Open after a crash. After a crash, a single atomic write leaves either
// the old or the new file, at worst with a stray ".<name>.fsplane-*.tmp"
// beside it; a transaction leaves no such files once recovered.
//
// # Concurrency
//
// A *Workspace is safe for concurrent use. Commit and Undo are serialised
// within the process and, through a flock on a lock file in the state
// directory, with every other process that shares the state directory; so
// an ExpectedVersion check and the write it guards are atomic with respect
// to other fsplane writers. Writers that bypass fsplane are not excluded: a
// change they make between the check and the rename is lost, as with any
// editor. Reads take no locks and may observe a transaction half applied;
// the all-or-nothing guarantee is about failures and crashes, not isolation.
//
// # Undo
//
// Commit records the previous state of each changed file in a bounded,
// persistent journal in the state directory; Undo restores it, and refuses
// when the file changed since the recorded edit.
//
// Paths are those of a POSIX system; the package is written for Linux and
// builds on other Unix systems.
package workspace
