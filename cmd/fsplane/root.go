package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "fsplane",
		Short:         "The file plane for AI agents",
		Long:          "fsplane lets agents read, search, edit, patch, transfer and watch files safely and fast.",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Environment variables are read once the command line is parsed,
		// so that a flag's default (shown by --help) is never a secret.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return applyEnv(cmd) },
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageError(cmd, err) })
	root.AddCommand(newServeCmd(), newApplyCmd(), newVersionCmd(), newGrepCmd(), newFilesCmd(), newMCPCmd(), newConnectCmd())
	strictHelp(root)
	return root
}

// usageError reports a command line that cannot run (exit status 2): the
// problem, the command's usage line, and where its help is.
func usageError(cmd *cobra.Command, err error) error {
	msg := strings.TrimRight(err.Error(), "\n")
	if cmd.Runnable() {
		msg += "\nUsage: " + cmd.UseLine()
	}
	msg += "\nRun '" + cmd.CommandPath() + " --help' for details."
	return &exitError{code: 2, err: errors.New(msg), cmd: cmd.CommandPath()}
}

// noArgs refuses arguments, for commands that take none.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError(cmd, fmt.Errorf("unexpected argument %q: %s takes no arguments", args[0], cmd.Name()))
	}
	return nil
}

// strictHelp makes "fsplane help TOPIC" fail (exit status 2) when there is
// no such command; cobra's help command prints "Unknown help topic" and
// succeeds.
func strictHelp(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() != "help" || c.Run == nil {
			continue
		}
		show := c.Run
		c.Run = nil
		c.RunE = func(c *cobra.Command, args []string) error {
			if target, _, err := c.Root().Find(args); target == nil || err != nil {
				return usageError(c.Root(), fmt.Errorf("no help topic %q: it is not a command", strings.Join(args, " ")))
			}
			show(c, args)
			return nil
		}
	}
}

// version is set at link time (-ldflags "-X main.version=…"); otherwise it
// comes from the module build info.
var version = ""

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print fsplane's version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.WriteString(cmd.OutOrStdout(), "fsplane "+buildVersion()+"\n")
			return err
		},
	}
}

// stateDirFlag registers --state-dir, the same for every command that
// keeps undo history.
func stateDirFlag(f *pflag.FlagSet, p *string) {
	f.Var(&stateDirValue{p: p}, "state-dir",
		"where undo history and transaction journals live (default $XDG_STATE_HOME/fsplane or ~/.local/state/fsplane)")
	bindEnv(f, "state-dir", "FSPLANE_STATE_DIR")
}

// stateDirValue is --state-dir's value, given once (pflag would keep the
// last of two silently, and an undo run with the other would find no
// record), which may not start with "~". The shell expands ~ only at the start of a word, so --state-dir=~/st,
// or FSPLANE_STATE_DIR=~/st in an env file, arrives as it is: taken as a
// relative path, it put the undo journal (old contents of the files
// changed) into a directory named "~" of the current directory, often
// the very root being changed, where "rm -rf ~" is how one removes it.
type stateDirValue struct {
	p   *string
	set bool
}

func (v *stateDirValue) String() string {
	if v.p == nil { // a zero value, as flag packages make to find defaults
		return ""
	}
	return *v.p
}

func (v *stateDirValue) Type() string { return "string" }

func (v *stateDirValue) Set(s string) error {
	if v.set {
		return fmt.Errorf("given twice (%q, %q): undo history lives in one state directory; give it once", *v.p, s)
	}
	if rest, ok := strings.CutPrefix(s, "~"); ok {
		instead := "without ~ (" + s + ": another user's home directory)"
		if rest == "" || strings.HasPrefix(rest, "/") {
			instead = "as $HOME" + rest
		}
		return fmt.Errorf("~ is not expanded here (the shell expands it only at the start of a word): give the path %s", instead)
	}
	*v.p, v.set = s, true
	return nil
}

// envVarsKey is the flag annotation that lists a flag's environment
// variables.
const envVarsKey = "fsplane_env"

// bindEnv lets environment variables set the flag name: when the command
// line does not give it, the first of vars that is set and not empty does
// (a list flag takes a colon-separated list). They are read after the
// command line is parsed (applyEnv), never as the flag's default, so
// --help never shows their values (an API key, a token); the flag's usage
// names them instead.
func bindEnv(f *pflag.FlagSet, name string, vars ...string) {
	fl := f.Lookup(name)
	if fl == nil {
		panic("bindEnv: no flag --" + name)
	}
	if fl.Annotations == nil {
		fl.Annotations = map[string][]string{}
	}
	fl.Annotations[envVarsKey] = vars
	fl.Usage += " (env " + strings.Join(vars, ", else ") + ")"
}

// envVars returns the environment variables bound to fl, if any.
func envVars(fl *pflag.Flag) []string { return fl.Annotations[envVarsKey] }

// envValue returns the first of fl's variables that is set and not empty,
// and its value.
func envValue(fl *pflag.Flag) (name, value string) {
	for _, v := range envVars(fl) {
		if s, ok := os.LookupEnv(v); ok && s != "" {
			return v, s
		}
	}
	return "", ""
}

// applyEnv sets every flag of cmd that the command line left out from its
// environment variables (see bindEnv).
func applyEnv(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if err != nil || fl.Changed {
			return
		}
		name, v := envValue(fl)
		if name == "" {
			return
		}
		var serr error
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			serr = sv.Replace(strings.Split(v, string(os.PathListSeparator)))
		} else {
			serr = fl.Value.Set(v)
		}
		if serr != nil {
			err = usageError(cmd, fmt.Errorf("%s (for --%s): %v", name, fl.Name, serr))
		}
	})
	return err
}

// flagSource names where flag name's value came from, for an error about
// it: "--default-user", or "AIO_DEFAULT_USER (for --default-user)" when an
// environment variable set it.
func flagSource(cmd *cobra.Command, name string) string {
	fl := cmd.Flags().Lookup(name)
	if fl == nil || fl.Changed {
		return "--" + name
	}
	if v, _ := envValue(fl); v != "" {
		return v + " (for --" + name + ")"
	}
	return "--" + name
}

// envHelp is the paragraph of a command's help that lists the
// environment variables its flags read, made from the bindings, so it
// cannot drift from them.
func envHelp(f *pflag.FlagSet) string {
	var b strings.Builder
	b.WriteString("These flags can also be set with environment variables (the command line\nwins; a list variable is colon-separated):")
	f.VisitAll(func(fl *pflag.Flag) {
		if vars := envVars(fl); len(vars) > 0 {
			fmt.Fprintf(&b, "\n  --%-18s %s", fl.Name, strings.Join(vars, ", else "))
		}
	})
	b.WriteString("\nThe other flags have none.")
	return b.String()
}
