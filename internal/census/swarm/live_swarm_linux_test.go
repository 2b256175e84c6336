package swarm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// TestLiveSwarm runs a two-sibling host-overlay swarm on a tiny schedule
// and checks the census and the teardown. It takes about a minute (gopls
// loads the repository, the repository build is warmed), so it runs only
// with TENON_SWARM_LIVE=1; it needs gopls already installed
// (TENON_GOPLS=path, or the default cache of `tenon census swarm`) and the
// gonum.org/v1/plot module in the module cache.
func TestLiveSwarm(t *testing.T) {
	if os.Getenv("TENON_SWARM_LIVE") == "" {
		t.Skip("set TENON_SWARM_LIVE=1 to run the live swarm (about a minute)")
	}
	l := liveLayout(t)
	cache := filepath.Join(os.Getenv("HOME"), ".cache", "tenon")
	gopls := os.Getenv("TENON_GOPLS")
	if gopls == "" {
		gopls = filepath.Join(cache, "gopls-"+GoplsVersion, "gopls")
	}
	if _, err := os.Stat(gopls); err != nil {
		t.Skipf("gopls not installed (%v): run `tenon census swarm` once or set TENON_GOPLS", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	src, err := ModuleDir(ctx, "gonum.org/v1/plot@v0.17.0")
	if err != nil {
		t.Skipf("repository module unavailable: %v", err)
	}
	root := t.TempDir()
	repo, err := PrepareRepo(ctx, src, filepath.Join(root, "repo"), gopls, "./tools/bezier")
	if err != nil {
		t.Fatal(err)
	}
	sched, err := Schedule(0.01)
	if err != nil {
		t.Fatal(err)
	}
	// Host processes and process-backend sandboxes (where gopls runs as a
	// daemon the sandbox must keep past the action that starts it).
	for _, cfg := range []Config{HostOverlay, Sandbox} {
		t.Run(string(cfg), func(t *testing.T) {
			parent := fmt.Sprintf("tenon-test-swarm-%d", os.Getpid())
			work := filepath.Join(root, "work-"+string(cfg))
			res, err := Run(ctx, Options{Config: cfg, N: 2, Repo: repo, WorkDir: work,
				Schedule: sched, Seed: 1, RoundPause: 100 * time.Millisecond, TestPkg: "./tools/bezier",
				SharedDirs: []string{runtime.GOROOT()}, Layout: l, CgroupParent: parent})
			if g, oerr := cgroup.Open(l, parent); oerr == nil {
				t.Errorf("cgroup %s left behind", parent)
				_ = g.Delete()
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Samples) != len(sched) {
				t.Fatalf("%d samples, want %d", len(res.Samples), len(sched))
			}
			for _, s := range res.Samples {
				if s.N != 2 || s.RealBytes <= 0 || s.Classes.Sum() != s.DuplicateBytes {
					t.Errorf("sample %+v: want N=2, real > 0, classes summing to the duplicate", s)
				}
			}
			if _, err := os.Stat(work); !os.IsNotExist(err) {
				t.Errorf("work dir %s left behind (%v)", work, err)
			}
		})
	}
}
