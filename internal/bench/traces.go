package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/trajectory/agentcgroup"
)

// DefaultTracesDir is where the traces group looks for real trace sets,
// relative to the working directory: the shared directory next to the
// repository's worktrees. The data is read at run time, never copied.
const DefaultTracesDir = "../shared/traces"

// TraceCopies is how many times the traces group replicates each trace set
// (trajectory.Replicate, with its default spacing and offset): the sets
// are a few dozen runs, and a second copy arriving while the first runs
// keeps the budget loaded.
const TraceCopies = 2

// TraceSet is one real trace set of the traces group: a subdirectory of the
// traces directory in the AgentCgroup layout (<task>/attempt_N/), imported.
type TraceSet struct {
	Name      string // the subdirectory's name, e.g. agentcgroup-haiku
	Workflows []trajectory.Workflow
}

// LoadTraceSets imports every subdirectory of dir that holds AgentCgroup
// runs, in name order, and skips the others (a README, an empty
// directory); a symbolic link to a directory counts as one (a set linked
// in from elsewhere). A missing dir, or one without any trace set, is an
// error wrapping ErrNoTraces that names dir.
func LoadTraceSets(dir string) ([]TraceSet, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist", ErrNoTraces, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoTraces, err)
	}
	var sets []TraceSet
	for _, e := range entries {
		if !isDir(dir, e) {
			continue
		}
		wfs, _, err := agentcgroup.Import(filepath.Join(dir, e.Name()))
		if errors.Is(err, agentcgroup.ErrNoRuns) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("importing trace set %s: %w", e.Name(), err)
		}
		if len(wfs) > 0 {
			sets = append(sets, TraceSet{Name: e.Name(), Workflows: wfs})
		}
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("%w: %s holds no trace set (<set>/<task>/attempt_N/ with tool_calls.json)", ErrNoTraces, dir)
	}
	return sets, nil
}

// isDir reports whether entry e of dir is a directory or a symbolic link
// to one.
func isDir(dir string, e fs.DirEntry) bool {
	if e.Type()&fs.ModeSymlink == 0 {
		return e.IsDir()
	}
	fi, err := os.Stat(filepath.Join(dir, e.Name()))
	return err == nil && fi.IsDir()
}
