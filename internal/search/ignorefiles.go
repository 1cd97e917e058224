package search

import (
	"os"
	"path"
	"path/filepath"
	"slices"
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
	return fr.seal()
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

// ancestorFrames builds the frames of the ignore files above the root
// (Options.Ancestors) and loads those of the directories from the root
// down to the start's parent, so a search that starts below the root
// honours them (ripgrep reads the ignore files of the parents of the
// directories it is given). The engine itself reads nothing above the
// root.
func (w *walker[T]) ancestorFrames() *ignoreFrame {
	var fr *ignoreFrame
	for _, a := range w.o.ancestors {
		prefix := a.Below
		if w.startRel != "." {
			prefix += "/" + w.startRel
		}
		f := &ignoreFrame{parent: fr, prefix: prefix, repoRoot: a.Repo}
		for k, b := range map[ignoreKind][]byte{kindDotIgnore: a.Ignore, kindGitignore: a.Gitignore, kindExclude: a.Exclude} {
			if b != nil {
				f.lists[k] = parseIgnore(path.Join(filepath.ToSlash(a.Dir), ignoreFileNames[k]), b)
			}
		}
		fr = f.seal()
	}
	if w.startRel == "." {
		return fr
	}
	comps := strings.Split(w.startRel, "/")
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
			fr = f.seal()
		}
	}
	return fr
}

// ignoreFileNames names each kind's file, for diagnostics.
var ignoreFileNames = [numIgnoreKinds]string{kindDotIgnore: ".ignore", kindGitignore: ".gitignore", kindExclude: ".git/info/exclude"}

// AncestorIgnores are the ignore files of one directory above a search's
// root (see Options.Ancestors).
type AncestorIgnores struct {
	Dir string // the directory, absolute (for diagnostics)
	// Below is the root's path relative to Dir, slash-separated ("a/b").
	Below string
	// Repo: Dir holds ".git"; .gitignore files above it do not apply
	// below it.
	Repo bool
	// The files' contents; nil when Dir has none.
	Ignore, Gitignore, Exclude []byte
}

// ReadAncestorIgnores reads the ignore files ripgrep honours above dir
// (absolute, without symbolic links): .ignore in every ancestor up to
// "/"; .gitignore and .git/info/exclude in the ancestors that belong to
// dir's git repository, from the nearest one holding ".git" down (none
// when dir is in no repository, or is a repository's top itself: then
// only its own files apply). A nested repository's top is the nearest
// one. Outermost first, for Options.Ancestors. It reads with the os
// package, outside any os.Root: for callers that may read the whole file
// system, such as the command line on the user's own files. Unreadable
// files are left out, as the walk leaves them out.
func ReadAncestorIgnores(dir string) []AncestorIgnores {
	var out []AncestorIgnores // innermost first until the end
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	inRepo := err == nil // the repository's top is dir or below the ancestor at hand
	topFound := inRepo
	below := ""
	for cur := filepath.Clean(dir); ; {
		parent := filepath.Dir(cur)
		if parent == cur {
			break
		}
		below = path.Join(filepath.Base(cur), below)
		cur = parent
		a := AncestorIgnores{Dir: cur, Below: below, Ignore: readIgnoreFile(filepath.Join(cur, ".ignore"))}
		if !inRepo {
			a.Gitignore = readIgnoreFile(filepath.Join(cur, ".gitignore"))
			if fi, err := os.Lstat(filepath.Join(cur, ".git")); err == nil {
				a.Repo, inRepo, topFound = true, true, true
				if fi.IsDir() {
					a.Exclude = readIgnoreFile(filepath.Join(cur, ".git", "info", "exclude"))
				}
			}
		}
		out = append(out, a)
	}
	kept := out[:0]
	for _, a := range out {
		if !topFound {
			// In no repository: .gitignore files are not git's here.
			a.Gitignore = nil
		}
		if a.Ignore != nil || a.Gitignore != nil || a.Exclude != nil || a.Repo {
			kept = append(kept, a)
		}
	}
	slices.Reverse(kept)
	return kept
}

// readIgnoreFile reads a regular file (not a link, as git does not follow
// a .gitignore link) of at most maxIgnoreFileSize; nil when there is none.
func readIgnoreFile(name string) []byte {
	fi, err := os.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIgnoreFileSize {
		return nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	if b == nil {
		b = []byte{}
	}
	return b
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
