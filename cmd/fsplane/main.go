// Command fsplane is the file plane for AI agents: one binary whose
// subcommands are fronts over one engine (see the README).
//
// main only wires: it builds the command tree, runs it with a context that
// ends on SIGINT/SIGTERM (a second signal forces the stop, see
// stopSignals), and turns the returned error into an exit code.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/fsplane/fsplane/internal/fserr"
)

func main() {
	ownProcess = true
	sig := notifyStop()
	err := run(sig.ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	os.Exit(sig.exitCode(exitCode(err, os.Stderr)))
}

// run executes one fsplane command line. The error it returns, if any, is
// an *exitError that names the command that failed.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	// Cobra refuses a command line (an unknown command, say) before the
	// PersistentPreRunE hook runs; after it, an error is the command's.
	started := false
	pre := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		started = true
		return pre(cmd, args)
	}
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return nil
	}
	ee, ok := errors.AsType[*exitError](err)
	if !ok {
		if !started {
			return usageError(cmd, err)
		}
		ee = &exitError{code: 1, err: err}
	}
	if ee.cmd == "" {
		ee.cmd = cmd.CommandPath()
	}
	return ee
}

// exitError carries an exit code: 2 for a command line that cannot run
// (see usageError), 1 for a failure at run time, or a command's own
// statuses (grep's 1 for no match). Its message has been printed already
// when silent is set. cmd is the command that failed ("fsplane grep"),
// which run fills in.
type exitError struct {
	code   int
	silent bool
	err    error
	cmd    string
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitCode prints err, in the one form every error of a command takes
// ("fsplane grep: message", then any Usage and Hint lines), and returns
// the exit status. An error that is not an *exitError is a failure at run
// time: 1.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	ee, ok := errors.AsType[*exitError](err)
	if !ok {
		ee = &exitError{code: 1, err: err}
	}
	if !ee.silent {
		cmd := ee.cmd
		if cmd == "" {
			cmd = "fsplane"
		}
		msg := ee.err
		if fe, isFS := msg.(*fserr.Error); isFS {
			// A command that returned fsplane's error as it is: its hint
			// goes on a Hint line, as describe words it, not in the
			// parentheses of (*fserr.Error).Error.
			msg = describe(fe)
		}
		fmt.Fprintf(stderr, "%s: %v\n", cmd, msg)
	}
	return ee.code
}
