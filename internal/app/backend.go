package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/disk"
	"github.com/tenon-dev/tenon/internal/replay"
	"github.com/tenon-dev/tenon/internal/residency/managed"
	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/sandbox/docker"
	"github.com/tenon-dev/tenon/internal/sandbox/fake"
	"github.com/tenon-dev/tenon/internal/sandbox/process"
	"github.com/tenon-dev/tenon/internal/swap"
	"github.com/tenon-dev/tenon/internal/units"
)

// BackendNames lists the sandbox backends the commands accept, for help
// texts and errors.
const BackendNames = "process (embedded default), docker, or fake (simulated memory, for demos)"

// KnownBackend reports whether name is one of BackendNames.
func KnownBackend(name string) bool {
	return name == "process" || name == "docker" || name == "fake"
}

// openBackend opens the sandbox backend and, for the real backends, the
// workload domain cgroup every sandbox lives under (swap off, limit =
// budget). The returned close function destroys every sandbox and removes
// the domain; callers must call it, also on error paths after success.
// diskMax is the process backend's per-sandbox disk limit
// (process.Config.DiskMax: 0 its default, < 0 none). The sandboxes live
// under stateDir, and the images they run come from the image store of
// storeDir (tenon image import and build fill <storeDir>/images; a
// replay's run directory, its stateDir, is inside it). idleLoop is the
// process backend's Config.IdleLoop.
func openBackend(ctx context.Context, name, stateDir, storeDir, domain string, budget, diskMax int64, idleLoop bool, log *slog.Logger) (sandbox.Backend, controller.Domain, func(), error) {
	if budget <= 0 {
		return nil, nil, nil, fmt.Errorf("--budget must be positive, e.g. --budget 2GiB")
	}
	if idleLoop && name != "process" {
		return nil, nil, nil, fmt.Errorf("--idle-loop: the %s backend has no idle loop, only the process backend has", name)
	}
	if name == "fake" {
		be := fake.New(fake.Options{Budget: budget, SandboxBytes: 8 * units.MiB})
		return be, be, func() { be.Close() }, nil
	}
	if !KnownBackend(name) {
		return nil, nil, nil, fmt.Errorf("unknown backend %q: want %s", name, BackendNames)
	}
	if err := cgroup.RequireRoot(); err != nil {
		return nil, nil, nil, err
	}
	layout, err := cgroup.Detect("/proc")
	if err != nil {
		return nil, nil, nil, err
	}
	dom, err := cgroup.OpenDomain(ctx, layout, domain, budget, log)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("opening workload domain %s: %w", domain, err)
	}
	closeDomain := func() {
		cctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := dom.Close(cctx); err != nil {
			log.Warn("closing workload domain", "err", err)
		}
	}
	// Keep the domain's memory out of swap: a budget overrun must fail,
	// not page out. On cgroup v2 the process backend does it per sandbox
	// instead (memory.swap.max 0, lifted during residency's page-outs),
	// since the domain's own 0 would forbid those page-outs.
	//
	// On v2 an OOM kill also takes the whole sandbox (memory.oom.group):
	// it should free a sandbox, not leave one half-killed; the replay and
	// the daemon replace a sandbox after an OOM kill anyway.
	perSandbox := false
	if m, ok := layout.Controller(cgroup.Memory); ok && m.Version == cgroup.V2 && name == "process" {
		perSandbox = true
	} else if err := dom.DisableSwap(); err != nil {
		closeDomain()
		return nil, nil, nil, err
	}
	// Both backends run the images of the state directory's store: the
	// process backend mounts their layers, the docker backend loads one
	// into the engine when it lacks it.
	images, err := OpenImageStore(storeDir)
	if err != nil {
		closeDomain()
		return nil, nil, nil, err
	}
	closeImages := func() {
		if err := images.Close(); err != nil {
			log.Warn("closing the image store", "err", err)
		}
	}
	var be sandbox.Backend
	switch name {
	case "process":
		if diskMax >= 0 {
			if err := disk.Check(); err != nil {
				// Like the page-out tier without swap: said once, at start.
				log.Warn("disk limits off: sandboxes' files are not size-limited", "why", err)
				diskMax = -1
			}
		}
		be, err = process.New(process.Config{StateDir: filepath.Join(stateDir, "process"), CgroupParent: dom.Group().Path(), Layout: layout,
			Logger: log, NoSwap: perSandbox, OOMGroup: perSandbox, DiskMax: diskMax, Images: images, IdleLoop: idleLoop})
	case "docker":
		self, _ := os.Executable()
		var d *docker.Backend
		if d, err = docker.New(ctx, docker.Config{Domain: dom.Group().Path(), Layout: layout, TenonBinary: self, Log: log, Images: images}); err == nil {
			// The wrapper lets the tenon policy's residency manager tear
			// docker sandboxes down and rematerialize them.
			be = managed.WrapDocker(d)
		}
	}
	if err != nil {
		closeImages()
		closeDomain()
		return nil, nil, nil, err
	}
	closer := func() {
		if err := be.Close(); err != nil {
			log.Warn("closing backend", "err", err)
		}
		closeImages()
		closeDomain()
	}
	return be, replay.CgroupDomain{Domain: dom, Compressed: zramCost(swap.NewManager(log))}, closer, nil
}

// zramCost is what swapped bytes of the domain's memory cost the host in
// tenon's zram device (their share of mem_used_total); 0 while zram is off
// or unreadable. Swap on a disk costs no memory.
func zramCost(m *swap.Manager) func(swapped int64) int64 {
	return func(swapped int64) int64 {
		mm, ok, err := m.MMStat()
		if !ok || err != nil {
			return 0
		}
		return mm.Cost(swapped)
	}
}
