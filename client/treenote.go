package client

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"strconv"
)

// A tree download (GetTree) leaves out what the server cannot read (a
// file it may not open, the entries of a directory it may not list) and
// goes on; the archive's last member is then the tree's top again, the
// directory "./", whose PAX records name them. These read it.

// TreeSkipped is an entry a tree download left out: its name in the
// archive (no trailing slash), a stable error code (permission_denied,
// io_error, …) and a message for people.
type TreeSkipped struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// SkippedInTree reads hdr, a member of a GetTree archive: ok is true
// when it carries the note, count how many entries were left out, and
// listed the first of them (all, unless they took over 512 KiB). Check
// every member: an archive without the note is whole. A note that cannot
// be read is an error (ok is true then too: the tree is not whole).
func SkippedInTree(hdr *tar.Header) (count int, listed []TreeSkipped, ok bool, err error) {
	c, ok := hdr.PAXRecords["FSPLANE.skipped.count"]
	if !ok {
		return 0, nil, false, nil
	}
	count, err = strconv.Atoi(c)
	if err != nil || count < 1 {
		return 0, nil, true, fmt.Errorf("tree note: FSPLANE.skipped.count %q is not a count", c)
	}
	if err := json.Unmarshal([]byte(hdr.PAXRecords["FSPLANE.skipped"]), &listed); err != nil {
		return count, nil, true, fmt.Errorf("tree note: FSPLANE.skipped: %w", err)
	}
	return count, listed, true, nil
}
