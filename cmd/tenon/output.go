package main

import (
	"fmt"
	"io"

	"github.com/tenon-dev/tenon/internal/fsutil"
	"github.com/tenon-dev/tenon/internal/report"
)

// writeOutput writes path through write: "-" or "" is stdout, anything
// else is written atomically (fsutil.WriteFile), so a failure never leaves
// a half-written file behind. Files are world-readable: outputs are meant
// to be read, plotted and committed.
func writeOutput(env *cliEnv, path string, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(env.stdout)
	}
	return fsutil.WriteFile(path, 0o644, write)
}

// writeFileBytes writes b to path atomically and world-readable.
func writeFileBytes(path string, b []byte) error {
	return fsutil.WriteFile(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// writeComparison prints the comparison as a table or JSON and writes the plot.
func writeComparison(env *cliEnv, c *report.Comparison, asJSON bool, plotPath string) error {
	if plotPath != "" {
		if err := writeOutput(env, plotPath, func(w io.Writer) error { return report.WritePlot(w, c) }); err != nil {
			return err
		}
	}
	if asJSON {
		return report.WriteJSON(env.stdout, c)
	}
	if err := report.WriteTable(env.stdout, c); err != nil {
		return err
	}
	if plotPath != "" {
		fmt.Fprintf(env.stdout, "\nplot: %s\n", plotPath)
	}
	return nil
}
