package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/fsplane/fsplane/internal/connector/host"
	"github.com/fsplane/fsplane/internal/connector/proto"
	"github.com/fsplane/fsplane/internal/ops"
	"github.com/fsplane/fsplane/internal/tui"
)

type connectConfig struct {
	token, name, mode, caFile, stateDir string
	root                                onceValue
	allow                               []string
	noTUI, latencyTuning                bool
}

func newConnectCmd() *cobra.Command {
	var c connectConfig
	cmd := &cobra.Command{
		Use:   "connect URL",
		Short: "Let an agent's fsplane hub work on this computer's files",
		Long: `Connect this computer to an agent's hub (the fsplane serve at URL, http(s)://
or ws(s)://) over one outbound WebSocket, and execute the file operations the
agent sends: read, stat, list, grep, search, download, write, edit, patch, undo.

This computer sets the rules and enforces them itself, whatever the hub sends:
  - Only the --root directory (one; default: the current directory) and the
    --allow directories are reachable; absolute paths outside them, ".."
    and symbolic links leading out are refused.
  - It starts Read-only: every write is refused with "Writes are disabled on
    this host. Press F3 to switch to Read&Write." F3 toggles the mode in the
    terminal interface and tells the hub at once; --mode read-write starts
    writable.
  - Writes are atomic and recorded for undo (--state-dir).
  - TLS certificates are always verified; --ca-file adds a CA to the system's
    (for a hub's self-signed certificate, that certificate's file).

An https:// URL needs a hub that serves TLS (fsplane serve --tls-cert and
--tls-key, or a proxy in front that terminates TLS). Use http:// only for a
hub on loopback: elsewhere the token and the files would cross the network
in clear text.

The terminal interface shows the hub, the connection, the roots, the mode and
a log of every operation (time, op, path, result). With --no-tui, or when
standard output is not a terminal, the same log is printed as lines, and
SIGUSR1 (kill -USR1 PID) toggles the mode as F3 does. It reconnects by itself
(backoff up to 5 s), saying why in a few words ("hub unreachable (connection
refused)", "hub shut down"); with --no-tui the whole error goes to standard
error. q or ctrl-c quits.

The token is the hub's --connector-token (or its API key). Prefer
FSPLANE_CONNECTOR_TOKEN to --token: other users of this computer can see
command-line arguments.`,
		Example: `  FSPLANE_CONNECTOR_TOKEN=… fsplane connect https://agent.example:18091
  FSPLANE_CONNECTOR_TOKEN=… fsplane connect https://agent.example:18091 --ca-file hub-cert.pem
  fsplane connect http://127.0.0.1:18091 --root ~/project --allow ~/notes --mode read-write`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usageError(cmd, errors.New("the hub URL is required: the address of the agent's fsplane serve, e.g. https://agent.example:18091"))
			case len(args) > 1:
				return usageError(cmd, fmt.Errorf("unexpected argument %q: connect takes one hub URL", args[1]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if g := c.root.given; len(g) > 1 {
				// --allow is how more directories are added.
				return usageError(cmd, c.root.check("root", fmt.Sprintf("there is one root; give each further directory with --allow, e.g. --root %s --allow %s",
					strconv.Quote(g[0]), strings.Join(quoteAll(g[1:]), " --allow "))))
			}
			return connect(cmd.Context(), args[0], c, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cwd, _ := os.Getwd()
	f := cmd.Flags()
	f.StringVar(&c.token, "token", "", "the hub's connector token")
	f.StringVar(&c.name, "name", "", "this host's name at the hub (default the hostname)")
	c.root.value = cwd
	f.Var(&c.root, "root", "the directory the agent may reach; relative paths resolve against it (once; more directories with --allow)")
	f.StringArrayVar(&c.allow, "allow", nil, "another directory the agent may reach (repeatable)")
	f.StringVar(&c.mode, "mode", "read-only", "read-only or read-write at start (F3 toggles)")
	f.StringVar(&c.caFile, "ca-file", "", "PEM file of CA certificates to trust besides the system's, for wss://")
	stateDirFlag(f, &c.stateDir)
	latencyTuningFlag(f, &c.latencyTuning, "its monitor thread on a steady tick, and one CPU while at most one operation runs")
	f.BoolVar(&c.noTUI, "no-tui", false, "print the log as lines instead of the terminal interface")
	bindEnv(f, "token", "FSPLANE_CONNECTOR_TOKEN")
	return cmd
}

// parseMode accepts the flag's spellings and the protocol's.
func parseMode(s string) (proto.Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "read-only", "read_only", "readonly", "ro":
		return proto.ReadOnly, nil
	case "read-write", "read_write", "readwrite", "rw":
		return proto.ReadWrite, nil
	}
	return "", fmt.Errorf("--mode %q: use read-only or read-write", s)
}

// tlsConfig returns the TLS settings for wss: the system's roots plus the
// CA file's certificates. Verification is never turned off.
func tlsConfig(caFile string) (*tls.Config, error) {
	if caFile == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--ca-file %s: no PEM certificate found", caFile)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// plaintextWarning says when the token and files would cross a network
// unencrypted.
func plaintextWarning(hubURL string) string {
	u, err := url.Parse(hubURL)
	if err != nil || u.Scheme != "ws" {
		return ""
	}
	// Host names are case-insensitive, and "localhost." is the same name.
	h := strings.TrimSuffix(u.Hostname(), ".")
	if strings.EqualFold(h, "localhost") {
		return ""
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return ""
	}
	return "warning: " + u.Host + " is reached without TLS: the token and file contents cross the network unencrypted; use https:// or wss://"
}

// connectHint says what to do about an error that ended the host. The
// particular refusals come first: each has its own remedy, which the
// general one's hint would contradict.
func connectHint(err error) error {
	switch {
	case errors.Is(err, host.ErrNeedsTLS):
		return err // it names the URL to use
	case errors.Is(err, host.ErrTokenMissing):
		return fmt.Errorf("%w\nHint: set FSPLANE_CONNECTOR_TOKEN (or pass --token) to the hub's --connector-token or its API key", err)
	case errors.Is(err, host.ErrHubHasNoToken):
		return fmt.Errorf("%w\nHint: no token can work until the hub has one: whoever runs it must start fsplane serve with --connector-token (or --api-key), then give that token here (FSPLANE_CONNECTOR_TOKEN or --token)", err)
	case errors.Is(err, host.ErrUnauthorized):
		return fmt.Errorf("%w\nHint: check --token (or FSPLANE_CONNECTOR_TOKEN) against the hub's --connector-token or API key", err)
	case errors.Is(err, host.ErrUntrusted):
		return fmt.Errorf("%w\nHint: pass the CA that signed the hub's certificate with --ca-file; verification is never skipped", err)
	case errors.Is(err, host.ErrProtocol):
		return fmt.Errorf("%w\nHint: URL should be the address of the agent's fsplane serve, e.g. https://agent.example:18091", err)
	}
	return err
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

func connect(ctx context.Context, rawURL string, c connectConfig, stdin io.Reader, stdout, stderr io.Writer) error {
	usage := func(err error) error { return &exitError{code: 2, err: err} }
	hubURL, err := host.HubURL(rawURL)
	if err != nil {
		return usage(err)
	}
	mode, err := parseMode(c.mode)
	if err != nil {
		return usage(err)
	}
	// Before --ca-file is read: the restart would read it again.
	keepMonitorAwake(ctx, c.latencyTuning, stderr)
	tlsConf, err := tlsConfig(c.caFile)
	if err != nil {
		return usage(err)
	}
	token, err := headerSecret("--token (or FSPLANE_CONNECTOR_TOKEN)", c.token)
	if err != nil {
		return usage(err)
	}
	name := strings.TrimSpace(c.name)
	if name == "" {
		if name, err = os.Hostname(); err != nil || name == "" {
			return usage(errors.New("cannot read the hostname; pass --name"))
		}
	}
	if err := proto.CheckName(name); err != nil {
		return usage(fmt.Errorf("--name %q: %w; choose another name", name, err))
	}
	source := func(i int) string {
		if i == 0 {
			return "--root"
		}
		return "--allow"
	}
	ws, err := openWorkspace(append([]string{c.root.value}, c.allow...), source, c.stateDir)
	if err != nil {
		return err
	}
	defer ws.Close()
	gov := governor(c.latencyTuning)
	defer gov.Close()
	var eopts ops.Options
	load := governed(gov, &eopts)
	eng := ops.New(ws, eopts)
	defer eng.Close()

	opts := host.Options{URL: hubURL, Token: token, Name: name, Mode: mode, Engine: eng, TLS: tlsConf, Version: buildVersion(), Load: load}
	warning := plaintextWarning(hubURL)
	if c.noTUI || !isTerminal(stdin) || !isTerminal(stdout) {
		if warning != "" {
			fmt.Fprintln(stderr, warning)
		}
		err = connectPlain(ctx, opts, ws.Roots(), stdout, stderr)
	} else {
		err = connectTUI(ctx, opts, ws.Roots(), warning, stdin, stdout)
	}
	if err != nil {
		return &exitError{code: 1, err: connectHint(err)}
	}
	return nil
}

// connectPlain runs the host with its log printed as lines.
func connectPlain(ctx context.Context, opts host.Options, roots []string, stdout, stderr io.Writer) error {
	if _, err := fmt.Fprintln(stdout, tui.Banner(opts.URL, opts.Name, roots, opts.Mode)); err != nil {
		return err
	}
	// As with the interface, the operations never wait for the log: a
	// pipe into a pager nobody scrolls would otherwise stop them all.
	feed, flushed := tui.PlainFeed(stdout, 0)
	opts.OnEvent = feed.Event
	opts.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h, err := host.New(opts)
	if err != nil {
		feed.Done(err)
		flushed()
		return err
	}
	// Without a terminal there is no F3: SIGUSR1 toggles the mode instead
	// (kill -USR1 PID), announced to the hub at once.
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	go func() {
		for range usr1 {
			next := proto.ReadWrite
			if h.Mode() == proto.ReadWrite {
				next = proto.ReadOnly
			}
			if err := h.SetMode(next); err != nil {
				fmt.Fprintln(stderr, "fsplane connect: cannot switch mode:", err)
			}
		}
	}()
	err = h.Run(ctx)
	feed.Done(err)
	flushed() // every line, "stopped" last, before the exit
	return err
}

// connectTUI runs the host under the terminal interface; quitting it
// stops the host. SIGINT and SIGTERM are stopSignals' alone (bubbletea's
// own handler is off): with both, a signal from outside raced bubbletea's
// shutdown and hung the process with the terminal left raw. The first
// cancels ctx, and the program is asked to quit as q does: killing it
// through tea.WithContext instead closes its input reader without
// waiting for the goroutine reading it (a data race inside bubbletea).
//
// The colors are chosen once, from the environment (tui.DetectProfile):
// the model styles the view for that profile and the program downsamples
// to it. Nothing asks the terminal, or tmux, its colors. The view puts itself on
// the alternate screen (tui.Model.View).
func connectTUI(ctx context.Context, opts host.Options, roots []string, warning string, stdin io.Reader, stdout io.Writer) error {
	var h *host.Host
	profile := tui.DetectProfile(stdout)
	model := tui.New(tui.Options{HubURL: opts.URL, Name: opts.Name, Roots: roots, Mode: opts.Mode, Warning: warning, Profile: profile,
		SetMode: func(m proto.Mode) error { return h.SetMode(m) }})
	p := tea.NewProgram(model, tea.WithoutSignalHandler(), tea.WithColorProfile(profile), tea.WithInput(stdin), tea.WithOutput(stdout))
	// The host's events wait in a queue, never for the screen: a
	// terminal that stops reading blocks the program, and must not block
	// the operations with it (tui.Feed). Send returns at once after the
	// program ended, so the queue never waits on a closed interface.
	feed := tui.NewFeed(0)
	opts.OnEvent = feed.Event
	var err error
	if h, err = host.New(opts); err != nil {
		return err
	}
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runErr := make(chan error, 1)
	go func() {
		err := h.Run(hctx)
		runErr <- err
		feed.Done(err)
	}()
	quit := make(chan struct{})
	go feed.Run(p.Send, quit)
	go func() {
		select {
		case <-ctx.Done():
			p.Quit()
		case <-quit:
		}
	}()
	_, perr := p.Run()
	close(quit)
	cancel()
	err = <-runErr
	// Nothing kills the program on purpose (it quits), so any error is
	// one: bubbletea v2 reports a panic, a failed terminal read or size as
	// "killed", and none of them may end as a quiet exit 0.
	if perr != nil && err == nil {
		return fmt.Errorf("terminal interface: %w", perr)
	}
	return err
}
