package realtools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
)

// ErrMissing wraps a repositories or traces directory that is not there.
var ErrMissing = errors.New("realtools: input directory missing")

// Build makes one workflow per repository of reposDir/manifest.json, in
// manifest order, from the runs in tracesDir (<task>/attempt_1/). Paths in
// the workflows are absolute: they name the archives and pylib in reposDir,
// which the replay reads at run time.
func Build(reposDir, tracesDir string) ([]trajectory.Workflow, *Manifest, error) {
	for _, d := range []string{reposDir, tracesDir} {
		if _, err := os.Stat(d); errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%w: %s", ErrMissing, d)
		}
	}
	reposDir, err := filepath.Abs(reposDir)
	if err != nil {
		return nil, nil, err
	}
	m, err := LoadManifest(filepath.Join(reposDir, "manifest.json"))
	if err != nil {
		return nil, nil, err
	}
	imported, _, err := agentcgroup.Import(tracesDir)
	if err != nil {
		return nil, nil, fmt.Errorf("importing %s: %w", tracesDir, err)
	}
	byID := make(map[string]trajectory.Workflow, len(imported))
	for _, w := range imported {
		byID[w.ID] = w
	}
	p := Paths{Pylib: filepath.Join(reposDir, "pylib")}
	var out []trajectory.Workflow
	for _, r := range m.Repos {
		rec, ok := byID[r.Task]
		if !ok {
			return nil, nil, fmt.Errorf("task %s (repo %s): no usable run in %s", r.Task, r.Name, tracesDir)
		}
		calls, err := readCalls(filepath.Join(tracesDir, r.Task, "attempt_1", "tool_calls.json"))
		if err != nil {
			return nil, nil, fmt.Errorf("task %s: %w", r.Task, err)
		}
		p.Archive = filepath.Join(reposDir, r.Name+".tar.gz")
		if _, err := os.Stat(p.Archive); err != nil {
			return nil, nil, fmt.Errorf("repo %s: %w", r.Name, err)
		}
		w, err := Convert(r, calls, rec, p)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, w)
	}
	return out, m, nil
}

func readCalls(path string) ([]Call, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var calls []Call
	if err := json.Unmarshal(b, &calls); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return calls, nil
}
