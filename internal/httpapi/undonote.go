package httpapi

import (
	"fmt"

	"github.com/fsplane/fsplane/internal/workspace"
)

// A change that commits without an undo record must say so: the routes
// whose changes undo can revert put undo_recorded false in their data,
// and a hint saying why; when the record was made the field is left out,
// so ordinary answers keep AIO's shape. The engine reports only whether
// a record was made, so the hint names the causes that fit the change.
var (
	// whyFile: the workspace records a regular file's previous content up
	// to the undo entry limit, and a link, when the state directory can
	// store them.
	whyFile = fmt.Sprintf("what it replaced or removed is larger than undo keeps (%d MiB by default) or is not a regular file, or the state directory could not store the record (full or not writable)",
		workspace.DefaultUndoMaxEntryBytes>>20)
	// whyCreated: a created file has no previous content to keep.
	whyCreated = "the state directory could not store the record (full or not writable)"
	whyDir     = "undo does not record directories"
	whyTree    = "undo does not record a directory an archive created whole; delete the directory to revert it"
	whyMerge   = "the archive held no file undo records (only directories and links), or the state directory could not store the records"
)

// undoNote returns a change's undo_recorded and hint: nil and "" when it
// was recorded, else false and a hint built on why.
func undoNote(recorded bool, why string) (*bool, string) {
	return undoNoteFor(recorded, "this change", why)
}

// undoNoteFor is undoNote naming what went unrecorded.
func undoNoteFor(recorded bool, what, why string) (*bool, string) {
	if recorded {
		return nil, ""
	}
	f := false
	return &f, what + " has no undo record, so undo cannot revert it: " + why
}

// fileWhy is why a change of a file may have gone unrecorded, given
// whether it created the file.
func fileWhy(created bool) string {
	if created {
		return whyCreated
	}
	return whyFile
}

// entryWhy is fileWhy for a change of an entry that may be a directory
// (copy, move, delete).
func entryWhy(dir bool) string {
	if dir {
		return whyDir
	}
	return whyFile
}
