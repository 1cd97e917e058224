package main

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/fsplane/fsplane/internal/applytest"
	"github.com/fsplane/fsplane/internal/fserr"
)

// runBinaryEnv is runBinary with environment variables added.
func runBinaryEnv(t *testing.T, dir string, env []string, args ...string) applytest.Outcome {
	t.Helper()
	return runBinaryWith(t, dir, "", env, args...)
}

// errorLine is the one form of every error main prints: "fsplane: …" or
// "fsplane SUBCOMMAND: …".
var errorLine = regexp.MustCompile(`^fsplane( [a-z]+)?: \S`)

// TestCommandLineErrors: each error names the command that failed and
// says what to do, in one form; a command line that cannot run exits 2,
// a failure at run time 1.
func TestCommandLineErrors(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() })
	state := t.TempDir()
	tests := []struct {
		name string
		env  []string
		args []string
		exit int
		want []string
		not  []string
	}{
		{"connect without URL", nil, []string{"connect"}, 2,
			[]string{"fsplane connect: the hub URL is required", "Usage: fsplane connect URL", "Run 'fsplane connect --help'"}, []string{"accepts 1 arg"}},
		{"unknown flag", nil, []string{"grep", "--bogus", "x"}, 2,
			[]string{"fsplane grep: unknown flag: --bogus", "Run 'fsplane grep --help'"}, nil},
		{"unknown command", nil, []string{"bogus"}, 2,
			[]string{`fsplane: unknown command "bogus"`, "Run 'fsplane --help'"}, nil},
		{"unexpected argument", nil, []string{"mcp", "extra"}, 2,
			[]string{`fsplane mcp: unexpected argument "extra"`, "Run 'fsplane mcp --help'"}, []string{"unknown command"}},
		{"version takes no argument", nil, []string{"version", "extra"}, 2, []string{`fsplane version: unexpected argument "extra"`}, nil},
		{"grep without pattern", nil, []string{"grep"}, 2, []string{"fsplane grep: no pattern given", "Usage: fsplane grep"}, nil},
		{"grep -o", nil, []string{"grep", "-o", "x"}, 2,
			[]string{"fsplane grep: -o (--only-matching) is not supported", "drop -o", "Run 'fsplane grep --help'"}, []string{"unknown shorthand"}},
		{"bad regex names the flag", nil, []string{"grep", "("}, 2,
			[]string{"fsplane grep: error parsing regexp", "use -F (--fixed-strings) to search"}, []string{"fixed_strings"}},
		{"unknown help topic", nil, []string{"help", "bogus"}, 2, []string{`fsplane: no help topic "bogus"`, "Run 'fsplane --help'"}, nil},
		{"default user from the environment", []string{"AIO_DEFAULT_USER=nosuchuser"}, []string{"serve", "--state-dir", state}, 2,
			[]string{"fsplane serve: AIO_DEFAULT_USER (for --default-user): no such user"}, nil},
		{"bad surface from the environment", []string{"FSPLANE_API_SURFACE=v3"}, []string{"serve", "--state-dir", state}, 2,
			[]string{`fsplane serve: FSPLANE_API_SURFACE (for --api-surface) "v3": use full or v2`}, nil},
		{"negative connection cap", nil, []string{"serve", "--max-connections", "-1", "--state-dir", state}, 2,
			[]string{"fsplane serve: --max-connections -1: must not be negative"}, nil},
		{"spin wait too long", nil, []string{"serve", "--spin-wait", "5ms", "--state-dir", state}, 2,
			[]string{"fsplane serve: --spin-wait 5ms: use 0 (off) to 1ms"}, nil},
		{"log level from the environment", []string{"FSPLANE_LOG_LEVEL=loud"}, []string{"mcp", "--state-dir", state}, 2,
			[]string{`fsplane mcp: FSPLANE_LOG_LEVEL (for --log-level) "loud"`}, nil},
		{"missing root", nil, []string{"serve", "--root", "/nonexistent/root", "--state-dir", state}, 1,
			[]string{"fsplane serve: cannot open the --root directory /nonexistent/root: no such file or directory",
				"Hint: give --root an existing directory this user can read"}, nil},
		{"root is a file", nil, []string{"serve", "--root", "/etc/passwd", "--state-dir", state}, 1,
			[]string{"fsplane serve: the --root directory /etc/passwd is not a directory", "Hint: give --root a directory: /etc holds this file"}, nil},
		{"missing root from the environment", []string{"FSPLANE_ROOT=/nonexistent/root"}, []string{"serve", "--state-dir", state}, 1,
			[]string{"fsplane serve: cannot open the FSPLANE_ROOT (for --root) directory /nonexistent/root"}, nil},
		{"address in use", nil, []string{"serve", "--listen", busy.Addr().String(), "--state-dir", state}, 1,
			[]string{"fsplane serve: listen on " + busy.Addr().String(), "address already in use", "Hint: ", "--listen"}, nil},
		{"missing mcp root", nil, []string{"mcp", "--root", "/nonexistent/root", "--state-dir", state}, 1,
			[]string{"fsplane mcp: cannot open the --root directory /nonexistent/root"}, nil},
		// A malformed --listen is a usage error, whatever part is wrong;
		// a port past 65535 used to fail only at listen, with status 1.
		{"listen without port", nil, []string{"serve", "--listen", "nonsense", "--state-dir", state}, 2,
			[]string{`fsplane serve: --listen "nonsense": address nonsense: missing port in address`, "use host:port"}, nil},
		{"listen port too big", nil, []string{"serve", "--listen", "127.0.0.1:99999", "--state-dir", state}, 2,
			[]string{`fsplane serve: --listen "127.0.0.1:99999"`, "invalid port", "use host:port with a port from 0 to 65535"}, nil},
		{"listen port not a number", nil, []string{"serve", "--listen", "127.0.0.1:eighty", "--state-dir", state}, 2,
			[]string{`fsplane serve: --listen "127.0.0.1:eighty"`, "use host:port"}, nil},
		{"listen from the environment", []string{"FSPLANE_LISTEN=127.0.0.1:-1"}, []string{"serve", "--state-dir", state}, 2,
			[]string{`fsplane serve: FSPLANE_LISTEN (for --listen) "127.0.0.1:-1"`, "use host:port"}, nil},
		{"listen on no address of this machine", nil, []string{"serve", "--listen", "192.0.2.1:0", "--state-dir", state, "--api-key", "k"}, 1,
			[]string{"fsplane serve: listen on 192.0.2.1:0", "Hint: --listen must name an address of this machine"}, nil},
		// An empty root is no path at all: it used to be refused as
		// `invalid root ""`, with no word of what a root is.
		{"empty root", nil, []string{"serve", "--root", "", "--state-dir", state}, 2,
			[]string{`fsplane serve: --root "": a root must be a directory path`, "Hint: name a directory"}, []string{"invalid root"}},
		{"empty root in the environment", []string{"FSPLANE_ROOT=" + state + "::"}, []string{"serve", "--state-dir", state}, 2,
			[]string{`fsplane serve: FSPLANE_ROOT (for --root) "": a root must be a directory path`}, nil},
		{"empty mcp root", nil, []string{"mcp", "--root", "", "--state-dir", state}, 2,
			[]string{`fsplane mcp: --root "": a root must be a directory path`}, nil},
		{"empty apply root", nil, []string{"apply", "--root", "", "--state-dir", state, "x"}, 2,
			[]string{`fsplane apply: --root "": a root must be a directory path`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := runBinaryEnv(t, t.TempDir(), tt.env, tt.args...)
			if got.Exit != tt.exit {
				t.Errorf("exit %d, want %d; stderr:\n%s", got.Exit, tt.exit, got.Stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, got.Stderr)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got.Stderr, n) {
					t.Errorf("stderr has %q:\n%s", n, got.Stderr)
				}
			}
			if first, _, _ := strings.Cut(got.Stderr, "\n"); !errorLine.MatchString(first) {
				t.Errorf("the error's first line %q is not in the form \"fsplane[ COMMAND]: message\"", first)
			}
		})
	}
}

func TestHelpTopics(t *testing.T) {
	t.Parallel()
	got := runBinary(t, t.TempDir(), "", "help", "grep")
	if got.Exit != 0 || !strings.Contains(got.Stdout, "fsplane grep [flags] PATTERN") {
		t.Errorf("help grep: %+v", got)
	}
}

// TestHelpNeverShowsSecrets: environment variables are read after the
// command line, not as flag defaults, so --help cannot print an API key
// or a token from the environment.
func TestHelpNeverShowsSecrets(t *testing.T) {
	t.Parallel()
	env := []string{"FSPLANE_API_KEY=SEKRIT123", "AIO_API_KEY=AIOSEKRIT", "FSPLANE_CONNECTOR_TOKEN=CTOK456",
		"FSPLANE_DEFAULT_USER=someone", "FSPLANE_STATE_DIR=/private/state", "FSPLANE_LOG_LEVEL=debug"}
	for _, cmd := range []string{"serve", "connect", "mcp", "apply", "grep"} {
		got := runBinaryEnv(t, t.TempDir(), env, cmd, "--help")
		if got.Exit != 0 {
			t.Fatalf("%s --help: %+v", cmd, got)
		}
		for _, secret := range []string{"SEKRIT123", "AIOSEKRIT", "CTOK456", "someone", "/private/state", `"debug"`} {
			if strings.Contains(got.Stdout+got.Stderr, secret) {
				t.Errorf("%s --help shows %s", cmd, secret)
			}
		}
	}
}

// TestServeEnvironment: a variable sets its flag when the command line
// does not, and the command line wins.
func TestServeEnvironment(t *testing.T) {
	t.Parallel()
	status := func(s *server, key string) int {
		req, _ := http.NewRequest("GET", s.url+"/v2/fs/list?path=.", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	s := startServerEnv(t, t.TempDir(), []string{"FSPLANE_API_KEY=envkey"})
	if a, b := status(s, ""), status(s, "envkey"); a != 401 || b != 200 {
		t.Errorf("FSPLANE_API_KEY: %d without the key, %d with it; want 401, 200", a, b)
	}
	s = startServerEnv(t, t.TempDir(), []string{"FSPLANE_API_KEY=envkey"}, "--api-key", "flagkey")
	if a, b := status(s, "envkey"), status(s, "flagkey"); a != 401 || b != 200 {
		t.Errorf("--api-key over FSPLANE_API_KEY: %d with the variable's key, %d with the flag's; want 401, 200", a, b)
	}
}

// serveEnv is every environment variable fsplane serve reads, by flag.
// README.md and the command's help must list exactly these.
var serveEnv = map[string][]string{
	"listen":          {"FSPLANE_LISTEN"},
	"root":            {"FSPLANE_ROOT"},
	"api-key":         {"FSPLANE_API_KEY", "AIO_API_KEY"},
	"state-dir":       {"FSPLANE_STATE_DIR"},
	"default-user":    {"FSPLANE_DEFAULT_USER", "AIO_DEFAULT_USER"},
	"api-surface":     {"FSPLANE_API_SURFACE"},
	"connector-token": {"FSPLANE_CONNECTOR_TOKEN"},
	"tls-cert":        {"FSPLANE_TLS_CERT"},
	"tls-key":         {"FSPLANE_TLS_KEY"},
	"latency-tuning":  {"FSPLANE_LATENCY_TUNING"},
}

// TestServeHelpListsItsEnvironment: the help and the README name the
// variables that exist, for the flags they set, and no others.
func TestServeHelpListsItsEnvironment(t *testing.T) {
	t.Parallel()
	cmd := newServeCmd()
	bound := map[string][]string{}
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if v := envVars(fl); len(v) > 0 {
			bound[fl.Name] = v
		}
	})
	if diff := cmp.Diff(serveEnv, bound); diff != "" {
		t.Errorf("variables bound to flags (-want +got):\n%s", diff)
	}
	for flag, vars := range serveEnv {
		line := regexp.MustCompile(`(?m)^  --` + flag + ` +` + strings.Join(vars, ", else ") + `$`)
		if !line.MatchString(cmd.Long) {
			t.Errorf("help does not list --%s %v:\n%s", flag, vars, cmd.Long)
		}
	}
	if strings.Contains(cmd.Long, "Every flag") {
		t.Error("help says every flag has a variable")
	}

	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, para, ok := strings.Cut(string(readme), "Flags and their environment variables:")
	if !ok {
		t.Fatal("README.md has no list of serve's environment variables")
	}
	para, _, _ = strings.Cut(para, "\n\n")
	para, _, _ = strings.Cut(para, ". With a key")
	para = strings.ReplaceAll(para, "\n", " ")
	inReadme := map[string][]string{}
	flagRE := regexp.MustCompile("`--([a-z-]+)[^`]*`( \\(([^)]*)\\))?")
	varRE := regexp.MustCompile("`([A-Z][A-Z_]+)`")
	documented := map[string]bool{}
	for _, m := range flagRE.FindAllStringSubmatch(para, -1) {
		documented[m[1]] = true
		for _, v := range varRE.FindAllStringSubmatch(m[3], -1) {
			inReadme[m[1]] = append(inReadme[m[1]], v[1])
		}
	}
	if diff := cmp.Diff(serveEnv, inReadme); diff != "" {
		t.Errorf("README.md's variables by flag (-want +got):\n%s", diff)
	}
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if fl.Name != "help" && !documented[fl.Name] {
			t.Errorf("README.md's list of serve flags lacks --%s", fl.Name)
		}
	})
}

// TestExitCodePrintsHint: an fsplane error a command returns as it is
// prints its hint on a Hint: line, as describe words it, rather than in
// the parentheses of its Error method.
func TestExitCodePrintsHint(t *testing.T) {
	t.Parallel()
	hinted := fserr.New(fserr.OutsideRoot, "patch", "x", "path x is outside").WithHint("use a path inside")
	tests := []struct {
		name string
		err  error
		want string
		code int
	}{
		{"fsplane error", &exitError{code: 1, err: hinted, cmd: "fsplane apply"}, "fsplane apply: path x is outside\nHint: use a path inside\n", 1},
		{"not an exitError", hinted, "fsplane: path x is outside\nHint: use a path inside\n", 1},
		{"without a hint", &exitError{code: 1, err: fserr.New(fserr.IOError, "read", "x", "i/o error")}, "fsplane: i/o error\n", 1},
		{"other error", &exitError{code: 2, err: errors.New("bad flag"), cmd: "fsplane grep"}, "fsplane grep: bad flag\n", 2},
		{"silent", &exitError{code: 1, silent: true, err: hinted}, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if code := exitCode(tt.err, &b); code != tt.code || b.String() != tt.want {
				t.Errorf("exit %d, printed %q; want %d, %q", code, b.String(), tt.code, tt.want)
			}
		})
	}
}
