package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tenon-dev/tenon/internal/fsutil"
)

// resultsPerm is the mode of every results file: they are meant to be
// committed and read.
const resultsPerm = 0o644

// WriteResults writes a run's results into dir: <name>.md, <name>.json and
// the plots with something to show, <name>-<plot> (Plots), each written
// atomically. It returns the files written, the Markdown and the JSON
// first; on an error, the plots written so far.
func WriteResults(dir string, meta Meta, r *Results) ([]string, error) {
	files, plots, err := writePlots(dir, meta.Name, r)
	if err != nil {
		return files, err
	}
	md := filepath.Join(dir, meta.Name+".md")
	if err := fsutil.WriteFile(md, resultsPerm, func(w io.Writer) error { return WriteMarkdown(w, meta, r, plots) }); err != nil {
		return files, err
	}
	js := filepath.Join(dir, meta.Name+".json")
	if err := fsutil.WriteFile(js, resultsPerm, func(w io.Writer) error { return WriteJSON(w, meta, r) }); err != nil {
		return files, err
	}
	return append([]string{md, js}, files...), nil
}

// Replot redraws the plots of the results JSON at path (written by
// WriteResults) next to it, named after it, and returns the files written,
// also on an error. A file without a plot to draw is an error naming it.
func Replot(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	files, _, err := writePlots(filepath.Dir(path), strings.TrimSuffix(filepath.Base(path), ".json"), r)
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("%s: nothing to plot (%d cases)", path, len(r.Outcomes))
	}
	return files, err
}

// errNothingToPlot aborts the write of a plot whose group did not run, so
// that no empty file is left behind.
var errNothingToPlot = errors.New("nothing to plot")

// writePlots draws every plot with something to show as
// dir/<name>-<suffix>; it returns the paths and the file names of the
// plots drawn.
func writePlots(dir, name string, r *Results) (files, plots []string, err error) {
	suffixes := make([]string, 0, len(Plots))
	for s := range Plots {
		suffixes = append(suffixes, s)
	}
	sort.Strings(suffixes)
	for _, s := range suffixes {
		file := name + "-" + s
		err := fsutil.WriteFile(filepath.Join(dir, file), resultsPerm, func(w io.Writer) error {
			ok, err := Plots[s](w, r)
			if err == nil && !ok {
				err = errNothingToPlot
			}
			return err
		})
		switch {
		case errors.Is(err, errNothingToPlot):
		case err != nil:
			return files, plots, err
		default:
			plots = append(plots, file)
			files = append(files, filepath.Join(dir, file))
		}
	}
	return files, plots, nil
}
