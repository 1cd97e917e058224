package watch

import (
	"os"
	"path"
)

// dirs reaches the directories and files of watched trees by descriptor,
// never by path: a watcher's root through the registry's opener (and only
// if it is still the directory the watcher was created on), anything
// below it one name at a time relative to its parent's descriptor,
// refusing symbolic links. So a path whose components are swapped for
// links meanwhile cannot lead out of the tree. It keeps what it opened
// for the rest of one operation; close releases it. The zero value is
// ready.
type dirs struct {
	roots    map[string]*os.File // by the opener
	open     map[string]*os.File // below a root, by name
	verified map[*Watcher]bool   // roots checked against the opened directory
}

// maxOpen bounds the directories below the roots a dirs holds open.
const maxOpen = 256

// get opens the directory dir, w.root or below it. The file belongs to
// the cache and stays open until the next call.
func (c *dirs) get(w *Watcher, dir string) (*os.File, error) {
	if c.open == nil {
		c.roots, c.open, c.verified = map[string]*os.File{}, map[string]*os.File{}, map[*Watcher]bool{}
	}
	if dir == w.root {
		f := c.roots[dir]
		if f == nil {
			var err error
			if f, err = w.reg.openDir(dir); err != nil {
				return nil, err
			}
			c.roots[dir] = f
		}
		if !c.verified[w] {
			// The directory at the root's path now may be another one
			// (removed and made again, or replaced): not this watcher's.
			if e, err := statDir(f); err != nil || e.id != w.rootID {
				return nil, errGone
			}
			c.verified[w] = true
		}
		return f, nil
	}
	if f := c.open[dir]; f != nil {
		return f, nil
	}
	if rel, ok := within(dir, w.root); !ok || rel == "." {
		return nil, errGone
	}
	parent, err := c.get(w, path.Dir(dir))
	if err != nil {
		return nil, err
	}
	f, err := openSub(parent, path.Base(dir))
	if err != nil {
		return nil, err
	}
	if len(c.open) >= maxOpen {
		// Bound the descriptors held (a walk over a large tree): start
		// over. Nothing returned before is used after the next get.
		for _, g := range c.open {
			g.Close()
		}
		clear(c.open)
	}
	c.open[dir] = f
	return f, nil
}

// stat describes the entry at p (w.root or below it) without following
// a symbolic link there.
func (c *dirs) stat(w *Watcher, p string) (entryInfo, error) {
	if p == w.root {
		d, err := c.get(w, p)
		if err != nil {
			return entryInfo{}, err
		}
		return statDir(d)
	}
	if _, ok := within(p, w.root); !ok {
		return entryInfo{}, errGone
	}
	d, err := c.get(w, path.Dir(p))
	if err != nil {
		return entryInfo{}, err
	}
	return statAt(d, path.Base(p))
}

func (c *dirs) close() {
	for _, m := range []map[string]*os.File{c.roots, c.open} {
		for _, f := range m {
			f.Close()
		}
		clear(m)
	}
	clear(c.verified)
}
