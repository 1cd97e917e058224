package watch

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// AIO's defaults and limits.
const (
	DefaultDebounce    = 300 * time.Millisecond
	MinDebounce        = 50 * time.Millisecond
	MaxDebounce        = 5 * time.Second
	DefaultRingSize    = 10_000
	DefaultMaxWatchers = 128
)

// fsplane's bounds on a watcher's life, which AIO does not state.
const (
	// DefaultIdleTimeout expires a watcher nobody polls. AIO clients
	// poll every few seconds, or hold a long poll (at most 60 s) or an
	// event stream open; ten minutes without any read is a client that
	// went away.
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultStoppedGrace is how long a stopped watcher stays readable
	// when its client does not read it to its end first.
	DefaultStoppedGrace = 5 * time.Minute
)

// DefaultExclude is the exclude list of a watcher created without one.
var DefaultExclude = []string{".git", "node_modules", "__pycache__", ".venv", "*.pyc", "*.pyo", ".DS_Store", "*.swp", "*.swo"}

// Event types.
const (
	Create = "create"
	Write  = "write"
	Remove = "remove"
	Rename = "rename"
	Chmod  = "chmod"
	// overflow marks lost events in a ring; never returned as an event.
	overflow = "overflow"
)

// Types lists the event types.
var Types = []string{Create, Write, Remove, Rename, Chmod}

// Config describes a watcher. Two watchers with equal configs are one.
type Config struct {
	// Path is the absolute, clean directory or file to watch.
	Path string
	// Recursive watches the whole tree below a directory (ignored for a
	// file).
	Recursive bool
	// Debounce is how long an event waits for more of its kind
	// (MinDebounce to MaxDebounce); 0 means DefaultDebounce.
	Debounce time.Duration
	// Exclude holds globs (path.Match) matched against each path
	// component below Path; a match excludes the entry and, for a
	// directory, everything below it. nil means DefaultExclude; an empty
	// slice excludes nothing.
	Exclude []string
	// Include, when not empty, keeps only events whose file name or
	// relative path matches one of these globs, and the moves of the
	// directories below which such events come (renames, and removes when
	// moved out): those take the files below them along.
	Include []string
}

func (c Config) normalize() (Config, error) {
	if !filepath.IsAbs(c.Path) || filepath.Clean(c.Path) != c.Path {
		return c, &Error{Kind: Invalid, Message: fmt.Sprintf("watch path %q must be absolute and clean", c.Path)}
	}
	if c.Debounce == 0 {
		c.Debounce = DefaultDebounce
	}
	if c.Debounce < MinDebounce || c.Debounce > MaxDebounce {
		return c, &Error{Kind: Invalid, Message: fmt.Sprintf("debounce must be between %d and %d ms, got %d",
			MinDebounce.Milliseconds(), MaxDebounce.Milliseconds(), c.Debounce.Milliseconds())}
	}
	if c.Exclude == nil {
		c.Exclude = DefaultExclude
	}
	for _, list := range [][]string{c.Exclude, c.Include} {
		for _, p := range list {
			if _, err := path.Match(p, ""); err != nil || p == "" {
				return c, &Error{Kind: Invalid, Message: fmt.Sprintf("invalid glob %q", p)}
			}
		}
	}
	return c, nil
}

// key identifies a config for sharing.
func (c Config) key() string {
	return fmt.Sprintf("%s\x00%t\x00%d\x00%s\x00%s", c.Path, c.Recursive, c.Debounce,
		strings.Join(c.Exclude, "\x01"), strings.Join(c.Include, "\x01"))
}

// excluded reports whether a component of rel matches an exclude glob.
func (c *Config) excluded(rel string) bool {
	for _, comp := range strings.Split(rel, "/") {
		for _, p := range c.Exclude {
			if ok, _ := path.Match(p, comp); ok {
				return true
			}
		}
	}
	return false
}

// included reports whether rel passes the include globs.
func (c *Config) included(rel string) bool {
	if len(c.Include) == 0 {
		return true
	}
	base := path.Base(rel)
	for _, p := range c.Include {
		if ok, _ := path.Match(p, base); ok {
			return true
		}
		if ok, _ := path.Match(p, rel); ok {
			return true
		}
	}
	return false
}

// Kind classifies an Error.
type Kind int

// Error kinds.
const (
	Invalid     Kind = iota + 1 // bad configuration or parameter
	NotFound                    // unknown watcher, or the path does not exist
	Limit                       // too many watchers
	Unavailable                 // inotify missing or out of watches
	Timeout                     // Wait saw no event in time
)

// Error is a watch failure; Message says what to do.
type Error struct {
	Kind    Kind
	Message string
}

func (e *Error) Error() string { return e.Message }

// within reports whether the clean absolute path p lies in dir and
// returns the relative remainder ("." for dir itself).
func within(p, dir string) (string, bool) {
	if p == dir {
		return ".", true
	}
	if dir == "/" {
		return p[1:], strings.HasPrefix(p, "/")
	}
	if strings.HasPrefix(p, dir) && len(p) > len(dir) && p[len(dir)] == '/' {
		return p[len(dir)+1:], true
	}
	return "", false
}
