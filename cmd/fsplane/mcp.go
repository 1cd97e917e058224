package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/fsplane/fsplane/internal/mcpserver"
	"github.com/fsplane/fsplane/internal/ops"
)

type mcpConfig struct {
	roots    []string
	stateDir string
	readOnly bool
	logLevel string
	// logLevelSource names where logLevel came from, for errors.
	logLevelSource string
}

func newMCPCmd() *cobra.Command {
	var c mcpConfig
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve fsplane's file tools to an MCP client over stdio",
		Long: `Serve fsplane's file tools (read, write, edit, patch, grep, glob, list,
stat, move, delete, undo) to an MCP client over standard input and output.
Logs go to standard error.

The tools may touch only the --root directories (default: the current
directory); relative paths start at the first. A client that advertises MCP
roots narrows this further: the session may use only where its roots and the
--root directories overlap. With --read-only the writing tools are not
offered at all, and the engine refuses writes anyway.

Messages are JSON-RPC, one per line, each at most 16 MiB. A line that is not
a valid message (not JSON, not JSON-RPC 2.0, not UTF-8, or too long) is
answered with a JSON-RPC error and the session goes on. When standard input
closes, the requests already received are answered first (for up to a
minute), then the server exits.

Example client configuration:

  {"mcpServers": {"fsplane": {"command": "fsplane", "args": ["mcp", "--root", "/path/to/project"]}}}`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.logLevelSource = flagSource(cmd, "log-level")
			return runMCP(cmd.Context(), c, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cwd, _ := os.Getwd()
	f := cmd.Flags()
	f.StringArrayVar(&c.roots, "root", []string{cwd}, "directory the tools may use (repeatable; the first is the base for relative paths)")
	stateDirFlag(f, &c.stateDir)
	f.BoolVar(&c.readOnly, "read-only", false, "offer only read, grep, glob, list and stat, and refuse every write")
	f.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error (logs go to standard error, never file contents)")
	bindEnv(f, "log-level", "FSPLANE_LOG_LEVEL")
	return cmd
}

func runMCP(ctx context.Context, c mcpConfig, stdin io.Reader, stdout, stderr io.Writer) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		src := c.logLevelSource
		if src == "" {
			src = "--log-level"
		}
		return &exitError{code: 2, err: fmt.Errorf("%s %q: use debug, info, warn or error", src, c.logLevel)}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if os.Getenv("GOGC") == "" {
		// The live heap is a few MiB while each call allocates a few times
		// the text it returns (read, then JSON-encoded by the SDK): at the
		// default GOGC the collector runs on nearly every call, which on a
		// small machine costs more latency than the memory it saves.
		debug.SetGCPercent(400)
	}
	ws, err := openWorkspace(c.roots, sameSource("--root"), c.stateDir)
	if err != nil {
		return err
	}
	defer ws.Close()
	eng := ops.New(ws, ops.Options{ReadOnly: c.readOnly, Logger: log})
	defer eng.Close()
	srv := mcpserver.New(eng, mcpserver.Options{ReadOnly: c.readOnly, Version: buildVersion(), Logger: log})
	log.Info("Serving MCP on stdio", "roots", strings.Join(ws.Roots(), ","), "read_only", c.readOnly,
		"state_dir", c.stateDir, "version", buildVersion())
	err = srv.Run(ctx, mcpserver.StdioTransport(stdin, stdout))
	switch {
	case err == nil, errors.Is(err, mcp.ErrConnectionClosed), errors.Is(err, io.EOF), ctx.Err() != nil:
		// The client closed its end, or we were told to stop.
		log.Info("MCP session ended")
		return nil
	}
	return &exitError{code: 1, err: err}
}
