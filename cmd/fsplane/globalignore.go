package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/fsplane/fsplane/internal/gitconfig"
	"github.com/fsplane/fsplane/internal/search"
)

// maxGlobalIgnoreSize bounds the git config and excludes files read, as
// the search engine bounds the ignore files it reads.
const maxGlobalIgnoreSize = 4 << 20

// readGlobalIgnore finds and reads git's global excludes file the way
// ripgrep does, for fsplane grep and files: core.excludesFile as set in
// $XDG_CONFIG_HOME/git/config (default ~/.config/git/config) or
// ~/.gitconfig (which wins, as in git), with a leading "~/" or "~user/"
// expanded and a relative path taken from the current directory (as rg
// takes it); when unset, $XDG_CONFIG_HOME/git/ignore (default
// ~/.config/git/ignore). getenv reads the environment (os.Getenv; a
// test's own). Like rg it reads neither /etc/gitconfig nor
// $GIT_CONFIG_GLOBAL, and it does not follow [include] (see
// internal/gitconfig). It returns nil when there is no such file. Files
// that cannot be read are passed over in silence, as rg passes them over
// (a search as another user must not fail on a HOME it cannot read);
// warn is told of a config file git would refuse (rg reads it all the
// same), whose values before the bad line count.
func readGlobalIgnore(getenv func(string) string, warn func(error)) *search.GlobalIgnore {
	home := getenv("HOME")
	xdg := getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var configs []string
	if xdg != "" {
		configs = append(configs, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"))
	}
	name, set := "", false
	for _, c := range configs {
		b, err := readLimited(c, maxGlobalIgnoreSize)
		if err != nil || b == nil {
			continue
		}
		v, ok, err := gitconfig.Lookup(b, "core.excludesFile")
		if err != nil {
			warn(fmt.Errorf("%s: %w", c, err))
		}
		if ok {
			name, set = v, true
		}
	}
	switch {
	case set:
		name = expandHome(name, home)
	case xdg != "":
		name = filepath.Join(xdg, "git", "ignore")
	}
	if name == "" {
		return nil
	}
	b, err := readLimited(name, maxGlobalIgnoreSize)
	if err != nil || b == nil {
		return nil
	}
	return &search.GlobalIgnore{Path: name, Content: b}
}

// expandHome expands a leading "~" or "~/" (home) or "~user/", as git
// expands a path value; any other "~" is left alone.
func expandHome(p, home string) string {
	rest, ok := strings.CutPrefix(p, "~")
	if !ok {
		return p
	}
	name, tail, _ := strings.Cut(rest, "/")
	if name == "" {
		if home == "" {
			return p
		}
		return filepath.Join(home, tail)
	}
	u, err := user.Lookup(name)
	if err != nil {
		return p
	}
	return filepath.Join(u.HomeDir, tail)
}

// readLimited reads a regular file (following links, as git and rg
// follow an excludes file's) of at most limit bytes; nil, without an
// error, when name is not a regular file (git and rg skip it silently).
func readLimited(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	if int64(len(b)) > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("larger than %d bytes", limit)}
	}
	return b, nil
}
