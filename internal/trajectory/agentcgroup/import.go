package agentcgroup

import (
	"encoding/json"
	"errors"
	"fmt"
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
// per run, in task order. A run without tool_calls.json, without
// resources.json, or with no valid sample or call is skipped and listed in
// the report. The workflow id is the task name, suffixed ".attempt_N" for
// attempts other than 1; the image comes from results.json when present.
// Malformed files are errors.
func Import(dir string) ([]trajectory.Workflow, Report, error) {
	runs, err := filepath.Glob(filepath.Join(dir, "*", "attempt_*"))
	if err != nil {
		return nil, Report{}, fmt.Errorf("listing runs in %s: %w", dir, err)
	}
	sort.Strings(runs)
	var (
		rep   Report
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
		w, reason, err := importRun(run, id)
		if err != nil {
			return nil, Report{}, fmt.Errorf("importing run %s: %w", id, err)
		}
		if reason != "" {
			rep.SkippedRuns = append(rep.SkippedRuns, SkippedRun{Run: id, Reason: reason})
			continue
		}
		wfs = append(wfs, w)
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

// importRun converts one run; a non-empty reason means skip it.
func importRun(run, id string) (trajectory.Workflow, string, error) {
	cf, err := os.Open(filepath.Join(run, "tool_calls.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return trajectory.Workflow{}, "no tool_calls.json", nil
	} else if err != nil {
		return trajectory.Workflow{}, "", err
	}
	defer cf.Close()
	calls, err := ParseCalls(cf)
	if err != nil {
		return trajectory.Workflow{}, "", err
	}
	rf, err := os.Open(filepath.Join(run, "resources.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return trajectory.Workflow{}, "no resources.json", nil
	} else if err != nil {
		return trajectory.Workflow{}, "", err
	}
	defer rf.Close()
	samples, err := ParseSamples(rf)
	if err != nil {
		return trajectory.Workflow{}, "", err
	}
	switch {
	case len(calls) == 0:
		return trajectory.Workflow{}, "no tool calls", nil
	case len(samples) == 0:
		return trajectory.Workflow{}, "no valid memory samples", nil
	}
	image, err := readImage(filepath.Join(run, "results.json"))
	if err != nil {
		return trajectory.Workflow{}, "", err
	}
	w := Convert(id, image, samples, calls)
	if err := w.Validate(); err != nil {
		return trajectory.Workflow{}, "", fmt.Errorf("converted workflow invalid: %w", err)
	}
	return w, "", nil
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
