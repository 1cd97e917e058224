package search

import (
	"path"
	"strings"
)

// maxIgnoreFileSize bounds the ignore files read; larger ones are skipped
// (ripgrep has no limit, but a multi-megabyte .gitignore is not one).
const maxIgnoreFileSize = 4 << 20

// loadIgnores reads the ignore files of directory n (whose entries are
// ents) and returns the frame that applies to its children: parent when
// the directory has none.
func (w *walker[T]) loadIgnores(n *node[T], h *dirHandle, ents []rawEntry, parent *ignoreFrame) *ignoreFrame {
	var fr *ignoreFrame
	get := func() *ignoreFrame {
		if fr == nil {
			fr = &ignoreFrame{parent: parent, base: n.rel}
		}
		return fr
	}
	for _, e := range ents {
		switch e.name {
		case ".gitignore", ".ignore":
			if e.typ != typeFile && e.typ != typeUnknown {
				// git does not follow a symbolic link named .gitignore.
				continue
			}
			b, ok := readSmall(h, e.name)
			if !ok {
				continue
			}
			k := kindGitignore
			if e.name == ".ignore" {
				k = kindDotIgnore
			}
			get().lists[k] = parseIgnore(path.Join(n.rel, e.name), b)
		case ".git":
			get().repoRoot = true
			if e.typ != typeDir {
				continue
			}
			g, err := h.openSubdir(".git")
			if err != nil {
				continue
			}
			info, err := g.openSubdir("info")
			g.close()
			if err != nil {
				continue
			}
			b, ok := readSmall(info, "exclude")
			info.close()
			if ok {
				get().lists[kindExclude] = parseIgnore(path.Join(n.rel, ".git/info/exclude"), b)
			}
		}
	}
	if fr == nil {
		return parent
	}
	return fr
}

// readSmall reads a small regular file of directory h.
func readSmall(h *dirHandle, name string) ([]byte, bool) {
	fh, err := h.openFile(name)
	if err != nil {
		return nil, false
	}
	defer fh.close()
	size, regular, _, err := fh.stat()
	if err != nil || !regular || size > maxIgnoreFileSize {
		return nil, false
	}
	buf := make([]byte, 0, size+1)
	for {
		k, err := fh.read(buf[len(buf):cap(buf)])
		if err != nil {
			return nil, false
		}
		if k == 0 {
			break
		}
		buf = buf[:len(buf)+k]
		if len(buf) == cap(buf) {
			if len(buf) > maxIgnoreFileSize {
				return nil, false
			}
			buf = append(buf, 0)[:len(buf)]
		}
	}
	return buf, true
}

// ancestorFrames loads the ignore files of the directories from the root
// down to the start's parent, so a search that starts below the root
// honours them (ripgrep reads the ignore files of the parents of the
// directories it is given). The root is the limit: nothing above it is
// read.
func (w *walker[T]) ancestorFrames() *ignoreFrame {
	if w.startRel == "." {
		return nil
	}
	comps := strings.Split(w.startRel, "/")
	var fr *ignoreFrame
	for i := range comps {
		dir := "."
		if i > 0 {
			dir = strings.Join(comps[:i], "/")
		}
		var f *ignoreFrame
		get := func() *ignoreFrame {
			if f == nil {
				f = &ignoreFrame{parent: fr, prefix: strings.Join(comps[i:], "/")}
			}
			return f
		}
		for _, name := range []string{".gitignore", ".ignore"} {
			if b, ok := w.readRootFile(path.Join(dir, name)); ok {
				k := kindGitignore
				if name == ".ignore" {
					k = kindDotIgnore
				}
				get().lists[k] = parseIgnore(path.Join(dir, name), b)
			}
		}
		if fi, err := w.root.Lstat(path.Join(dir, ".git")); err == nil {
			get().repoRoot = true
			if fi.IsDir() {
				if b, ok := w.readRootFile(path.Join(dir, ".git/info/exclude")); ok {
					get().lists[kindExclude] = parseIgnore(path.Join(dir, ".git/info/exclude"), b)
				}
			}
		}
		if f != nil {
			fr = f
		}
	}
	return fr
}

func (w *walker[T]) readRootFile(name string) ([]byte, bool) {
	fi, err := w.root.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIgnoreFileSize {
		return nil, false
	}
	b, err := w.root.ReadFile(name)
	if err != nil {
		return nil, false
	}
	return b, true
}
