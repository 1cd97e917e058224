package client

import (
	"archive/tar"
	"encoding/json"
	"strconv"
)

// A tree download (GetTree) leaves out what the server cannot read (a
// file it may not open, the entries of a directory it may not list) and
// goes on; the archive's last member is then a PAX global header that
// names them. These read it.

// TreeNoteName is the name of that member.
const TreeNoteName = "fsplane-skipped"

// TreeSkipped is an entry a tree download left out: its name in the
// archive (no trailing slash), a stable error code (permission_denied,
// io_error, …) and a message for people.
type TreeSkipped struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// SkippedInTree reads hdr, a member of a GetTree archive: ok is true
// when it is the note, count how many entries were left out, and listed
// the first of them (all, unless they took over 512 KiB). Check every
// member, or at least the last one before io.EOF: an archive without the
// note is whole.
func SkippedInTree(hdr *tar.Header) (count int, listed []TreeSkipped, ok bool) {
	if hdr.Typeflag != tar.TypeXGlobalHeader || hdr.Name != TreeNoteName {
		return 0, nil, false
	}
	count, _ = strconv.Atoi(hdr.PAXRecords["FSPLANE.skipped.count"])
	_ = json.Unmarshal([]byte(hdr.PAXRecords["FSPLANE.skipped"]), &listed)
	return count, listed, true
}
