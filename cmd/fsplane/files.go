package main

import (
	"bufio"
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/fsplane/fsplane/internal/search"
)

func newFilesCmd() *cobra.Command {
	var f grepFlags
	cmd := &cobra.Command{
		Use:   "files [flags] [PATH...]",
		Short: "List the files a search would look at (like rg --files)",
		Long: `Print the path of every file under each PATH (default: the current
directory) that fsplane grep would search, in path order: ignore files
(and git's global excludes file, as for grep) are honoured and
dot-prefixed names skipped unless --no-ignore / --hidden,
and -g / -t select files as for grep. The exit status is 0 when a file was
listed, 1 when none was and 2 on an error.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFiles(cmd.Context(), cmd.CommandPath(), cmd.OutOrStdout(), cmd.ErrOrStderr(), &f, args)
		},
	}
	fl := cmd.Flags()
	f.addWalkFlags(fl, "list")
	fl.BoolVar(&f.noMessages, "no-messages", false, "do not print errors about unreadable directories")
	return cmd
}

func runFiles(ctx context.Context, cmd string, stdout, stderr io.Writer, f *grepFlags, args []string) error {
	opts, err := f.searchOptions()
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	tuneRuntime(&opts)
	w := bufio.NewWriterSize(stdout, 64<<10)
	listed := false
	return searchPaths(ctx, w, stderr, cmd, f, args, "no files", &listed, func(sr *searchRoot) (search.Stats, error) {
		o := opts
		o.Ancestors, o.GlobalIgnore, o.GlobPrefix = sr.ancestors, sr.global, sr.globPrefix
		return search.Files(ctx, sr.root, sr.start, o, func(rel string) error {
			listed = true
			w.WriteString(joinDisplay(sr.prefix, rel))
			return w.WriteByte('\n')
		})
	})
}
