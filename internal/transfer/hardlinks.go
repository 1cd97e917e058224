package transfer

import (
	"io/fs"
	"syscall"
)

// linkMemory bounds a tree archive's linkSet: 16 MiB, the names it
// holds plus linkCost each.
const linkMemory = 16 << 20

// linkCost is what a linkSet spends on an inode beyond its name: the
// key, the string header, the count and the map's own share.
const linkCost = 64

// inode identifies a file: its device and inode number.
type inode struct{ dev, ino uint64 }

// firstName is the archive name carrying an inode's content and how
// many of the inode's other names may still come.
type firstName struct {
	name string
	left uint64
}

// linkSet remembers, while a tree archive is written, which regular
// files with several names already have their content in it, and under
// which name, so that their later names become hard link members, as GNU
// tar writes them. Its memory is bounded by its limit (linkMemory for
// WriteTree): an inode leaves the set once as many names as it had links
// when archived have been seen, and a full set records no more inodes, so
// the later names of those carry their content again. Not safe for
// concurrent use.
type linkSet struct {
	first       map[inode]firstName
	used, limit int
}

func newLinkSet(limit int) *linkSet {
	return &linkSet{first: map[inode]firstName{}, limit: limit}
}

// linkedInode returns fi's identity and link count when fi, a file's
// status, says it has more than one name; ok is false otherwise and on
// systems whose status is not a syscall.Stat_t.
func linkedInode(fi fs.FileInfo) (id inode, nlink uint64, ok bool) {
	st, isStat := fi.Sys().(*syscall.Stat_t)
	if !isStat || st.Nlink < 2 {
		return inode{}, 0, false
	}
	return inode{dev: uint64(st.Dev), ino: uint64(st.Ino)}, uint64(st.Nlink), true
}

// take returns the name whose member carries id's content, if one does,
// and counts the name being archived as one of id's.
func (s *linkSet) take(id inode) (string, bool) {
	f, ok := s.first[id]
	if !ok {
		return "", false
	}
	if f.left--; f.left == 0 {
		delete(s.first, id)
		s.used -= len(f.name) + linkCost
	} else {
		s.first[id] = f
	}
	return f.name, true
}

// record notes that name's member carries the whole content of id, a
// file with nlink names, unless the set is full. Call it only once the
// content is written.
func (s *linkSet) record(id inode, nlink uint64, name string) {
	cost := len(name) + linkCost
	if s.used+cost > s.limit {
		return
	}
	s.first[id] = firstName{name: name, left: nlink - 1}
	s.used += cost
}
