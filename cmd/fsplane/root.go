package main

import (
	"io"
	"os"
	"runtime/debug"

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
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newServeCmd(), newApplyCmd(), newVersionCmd(), newGrepCmd(), newFilesCmd(), newMCPCmd(), newConnectCmd())
	return root
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
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.WriteString(cmd.OutOrStdout(), "fsplane "+buildVersion()+"\n")
			return err
		},
	}
}

// envOr returns the environment variable's value, or def.
// stateDirFlag registers --state-dir, the same for every command that
// keeps undo history.
func stateDirFlag(f *pflag.FlagSet, p *string) {
	f.StringVar(p, "state-dir", envOr("FSPLANE_STATE_DIR", ""),
		"where undo history and transaction journals live (default $XDG_STATE_HOME/fsplane or ~/.local/state/fsplane; env FSPLANE_STATE_DIR)")
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}
