package census

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/tenon-dev/tenon/internal/clock"
)

// Sibling is one sandbox of the swarm.
type Sibling struct {
	Name string
	// Pids are processes of the sibling.
	Pids []int
	// Cgroups are cgroup directories (v1 or v2, e.g.
	// /sys/fs/cgroup/memory/tenon/sb-1) whose cgroup.procs, read
	// recursively, add processes to the sibling.
	Cgroups []string
	// Dirs are directories only this sibling sees (its workspace, its
	// writable layer); their resident file pages count as held by it.
	Dirs []string
}

// Freezer stops and resumes the tasks of a sibling (or of the whole
// swarm). cgroup.Group satisfies it. If it also has Frozen() (bool, error),
// the sampler checks the frozen state after Freeze.
type Freezer interface {
	Freeze(ctx context.Context) error
	Thaw(ctx context.Context) error
}

// AddrRange is a virtual address range [Start, End).
type AddrRange struct{ Start, End uint64 }

// Options configure one Sample.
type Options struct {
	Siblings []Sibling
	// SharedDirs are directories every sibling can see (the shared
	// read-only layer); their resident pages belong to no sibling.
	SharedDirs []string
	// DiscoverShared adds to SharedDirs the lower directories of the
	// overlays the siblings' processes see (the layers of the image their
	// sandboxes run, read-only and the same directories for every sandbox
	// of the image).
	DiscoverShared bool
	// Freezers are frozen for the duration of the sample and always thawed.
	Freezers []Freezer
	// FreezeTimeout bounds freezing and thawing (default 10 s).
	FreezeTimeout time.Duration
	// Ranges, when it has an entry for a pid, restricts that process's
	// census to those address ranges (and the files they map).
	Ranges map[int][]AddrRange
	// Start is when the swarm started; Snapshot.Elapsed is measured from it
	// (zero: Elapsed is 0).
	Start time.Time
	// Proc is the procfs mount (default "/proc"); KPageFlags defaults to
	// Proc/kpageflags. A missing kpageflags file is tolerated: anonymous
	// pages are then told by the pagemap file bit and THP/KSM go unnoted.
	Proc       string
	KPageFlags string
	// ZeroPFN is the frame number of the zero page (0: probe it with
	// ZeroPFN(Proc)).
	ZeroPFN uint64
	// PageSize defaults to os.Getpagesize().
	PageSize int
	// Clock times the sample and the freeze (default clock.Real).
	Clock  clock.Clock
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.FreezeTimeout <= 0 {
		o.FreezeTimeout = 10 * time.Second
	}
	if o.Proc == "" {
		o.Proc = "/proc"
	}
	if o.KPageFlags == "" {
		o.KPageFlags = filepath.Join(o.Proc, "kpageflags")
	}
	if o.PageSize <= 0 {
		o.PageSize = os.Getpagesize()
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
