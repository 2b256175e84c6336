package agentcgroup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// ErrNoRuns means the directory holds no <task>/attempt_N run directories.
var ErrNoRuns = errors.New("agentcgroup: no <task>/attempt_N run directories found")

// Import reads every run under dir (laid out as <task>/attempt_N/ holding
// resources.json, tool_calls.json and results.json) and returns one workflow
// per run, in task order. The workflow id is the task name, suffixed
// ".attempt_N" for attempts other than 1; the image comes from results.json
// when present. No run aborts the import: a run that cannot be read, or
// holds no usable sample or call, is skipped and listed with the reason in
// the report; what a run it imports lacks or holds wrong (a missing end
// time, command or sample, an unknown tool, a truncated file) is repaired
// or dropped as ParseCalls, ParseSamples and Convert say, and counted in
// Report.Warnings. Only a directory without runs is an error.
func Import(dir string) ([]trajectory.Workflow, Report, error) {
	runs, err := filepath.Glob(filepath.Join(dir, "*", "attempt_*"))
	if err != nil {
		return nil, Report{}, fmt.Errorf("listing runs in %s: %w", dir, err)
	}
	sort.Strings(runs)
	var (
		rep   = Report{Warnings: Warnings{}}
		wfs   []trajectory.Workflow
		peaks []float64
		waits []float64
	)
	for _, run := range runs {
		if st, err := os.Stat(run); err != nil || !st.IsDir() {
			continue
		}
		rep.Runs++
		task, attempt := filepath.Base(filepath.Dir(run)), filepath.Base(run)
		id := task
		if attempt != "attempt_1" {
			id += "." + attempt
		}
		w, warn, err := importRun(run, id)
		if err != nil {
			rep.SkippedRuns = append(rep.SkippedRuns, SkippedRun{Run: id, Reason: err.Error()})
			continue
		}
		rep.Warnings.merge(warn)
		wfs = append(wfs, w)
		restartable, boundaries := w.RestartableBoundaries()
		rep.Restartable += restartable
		rep.Boundaries += boundaries
		for _, a := range w.Actions {
			peaks = append(peaks, a.Recorded.PeakMiB)
			waits = append(waits, a.Wait)
		}
	}
	if rep.Runs == 0 {
		return nil, Report{}, fmt.Errorf("%s: %w", dir, ErrNoRuns)
	}
	rep.Imported, rep.Skipped, rep.Actions = len(wfs), len(rep.SkippedRuns), len(peaks)
	if len(peaks) > 0 {
		rep.MedianPeakMiB, rep.P95PeakMiB, rep.MaxPeakMiB = Quantile(peaks, 0.5), Quantile(peaks, 0.95), Quantile(peaks, 1)
		rep.MedianWaitS = Quantile(waits, 0.5)
	}
	return wfs, rep, nil
}

// importRun converts one run with its warnings; an error is the reason to
// skip it.
func importRun(run, id string) (trajectory.Workflow, Warnings, error) {
	warn := Warnings{}
	calls, err := readFile(filepath.Join(run, "tool_calls.json"), ParseCalls, warn)
	if err != nil {
		return trajectory.Workflow{}, nil, err
	}
	samples, err := readFile(filepath.Join(run, "resources.json"), ParseSamples, warn)
	if err != nil {
		return trajectory.Workflow{}, nil, err
	}
	switch {
	case len(calls) == 0:
		return trajectory.Workflow{}, nil, errors.New("no tool calls")
	case len(samples) == 0:
		return trajectory.Workflow{}, nil, errors.New("no valid memory samples")
	}
	// A run whose samples stop early (the container's stats ended first)
	// has calls without memory data: drop them.
	last := samples[len(samples)-1].Epoch
	kept := calls[:0]
	for _, c := range calls {
		if epoch(c.Start) > last {
			warn.add(WarnAfterSamples, 1)
			continue
		}
		kept = append(kept, c)
	}
	if len(kept) == 0 {
		return trajectory.Workflow{}, nil, errors.New("every tool call is after the last memory sample")
	}
	for _, c := range kept {
		if c.EndInferred {
			warn.add(WarnInferredEnd, 1)
		}
		if !knownTool(c.Tool) {
			warn.add(WarnUnknownTool, 1)
		}
		if commandText(c.Tool, c.Input) == "" && (c.Input == nil || carriesCommand[c.Tool]) {
			warn.add(WarnNoCommand, 1)
		}
	}
	image, err := readImage(filepath.Join(run, "results.json"))
	if err != nil {
		warn.add(WarnNoResultsJSON, 1)
	}
	w := Convert(id, image, samples, kept)
	if err := w.Validate(); err != nil {
		return trajectory.Workflow{}, nil, fmt.Errorf("converted workflow invalid: %w", err)
	}
	return w, warn, nil
}

// readFile opens path and parses it, adding the parser's warnings to warn.
// A missing file is "no NAME".
func readFile[T any](path string, parse func(io.Reader) (T, Warnings, error), warn Warnings) (T, error) {
	var zero T
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return zero, fmt.Errorf("no %s", filepath.Base(path))
	} else if err != nil {
		return zero, err
	}
	defer f.Close()
	v, w, err := parse(f)
	if err != nil {
		return zero, err
	}
	warn.merge(w)
	return v, nil
}
func readImage(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	defer f.Close()
	var r struct {
		Image string `json:"image"`
	}
	if err := json.NewDecoder(f).Decode(&r); err != nil {
		return "", fmt.Errorf("decoding results.json: %w", err)
	}
	return strings.TrimSpace(r.Image), nil
}
