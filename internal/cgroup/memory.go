package cgroup

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// unlimitedV1 is the smallest v1 limit treated as "no limit" (the kernel
// reports PAGE_COUNTER_MAX pages, 9223372036854771712 bytes on x86-64).
const unlimitedV1 = math.MaxInt64 / 2

// SetMemoryLimit sets the hard memory limit; bytes <= 0 removes it.
func (g *group) SetMemoryLimit(bytes int64) error {
	d, v, err := g.dir(Memory)
	if err != nil {
		return err
	}
	var file, val string
	switch v {
	case V1:
		file, val = "memory.limit_in_bytes", "-1"
		if bytes > 0 {
			val = strconv.FormatInt(bytes, 10)
		}
	default:
		file, val = "memory.max", "max"
		if bytes > 0 {
			val = strconv.FormatInt(bytes, 10)
		}
	}
	if err := g.write(filepath.Join(d, file), val); err != nil {
		return fmt.Errorf("setting memory limit of %s to %s: %w", g.path, val, err)
	}
	return nil
}

// Memory reads the group's memory accounting.
func (g *group) Memory() (MemoryStats, error) {
	d, v, err := g.dir(Memory)
	if err != nil {
		return MemoryStats{}, err
	}
	var s MemoryStats
	if v == V1 {
		s, err = memoryV1(d)
	} else {
		s, err = g.memoryV2(d)
	}
	if err != nil {
		return MemoryStats{}, fmt.Errorf("reading memory of %s: %w", g.path, err)
	}
	return s, nil
}

// Charged reads the group's usage plus its swapped memory (Memory's Usage +
// Swap) from the two counters alone.
func (g *group) Charged() (int64, error) {
	d, v, err := g.dir(Memory)
	if err != nil {
		return 0, err
	}
	usage, swap := "memory.usage_in_bytes", "memory.memsw.usage_in_bytes"
	if v != V1 {
		usage, swap = "memory.current", "memory.swap.current"
	}
	u, err := g.hot().int(filepath.Join(d, usage))
	if err != nil {
		return 0, fmt.Errorf("reading memory of %s: %w", g.path, err)
	}
	sw, err := g.hot().optionalInt(filepath.Join(d, swap))
	if err != nil {
		return 0, fmt.Errorf("reading memory of %s: %w", g.path, err)
	}
	if v == V1 && sw > 0 {
		// memsw counts memory and swap together.
		return max(sw, u), nil
	}
	return u + sw, nil
}

// WorkingSet is Memory's WorkingSet alone (usage less inactive page
// cache) from two files, not Memory's eight: residency's read of a
// sandbox stalled mid-action.
func (g *group) WorkingSet() (int64, error) {
	d, v, err := g.dir(Memory)
	if err != nil {
		return 0, err
	}
	_, ws, err := g.usageWorkingSet(d, v)
	return ws, err
}

// Room is Memory's Usage, WorkingSet, Swap and Limit alone (the other
// fields zero), from four files, not Memory's eight: what a domain's
// Available needs, read by every gate period, admission pass and sample
// of a replay.
func (g *group) Room() (MemoryStats, error) {
	d, v, err := g.dir(Memory)
	if err != nil {
		return MemoryStats{}, err
	}
	var s MemoryStats
	if s.Usage, s.WorkingSet, err = g.usageWorkingSet(d, v); err != nil {
		return MemoryStats{}, err
	}
	if v == V1 {
		sw, err := g.hot().optionalInt(filepath.Join(d, "memory.memsw.usage_in_bytes"))
		if err != nil {
			return MemoryStats{}, fmt.Errorf("reading memory of %s: %w", g.path, err)
		}
		s.Swap = max(sw-s.Usage, 0)
		if s.Limit, err = g.hot().int(filepath.Join(d, "memory.limit_in_bytes")); err != nil {
			return MemoryStats{}, fmt.Errorf("reading memory of %s: %w", g.path, err)
		}
		if s.Limit >= unlimitedV1 {
			s.Limit = -1
		}
		return s, nil
	}
	if s.Swap, err = g.hot().optionalInt(filepath.Join(d, "memory.swap.current")); err != nil {
		return MemoryStats{}, fmt.Errorf("reading memory of %s: %w", g.path, err)
	}
	lim, err := g.hot().str(filepath.Join(d, "memory.max"))
	if err != nil {
		return MemoryStats{}, fmt.Errorf("reading memory of %s: %w", g.path, err)
	}
	if s.Limit, err = parseMax(lim); err != nil {
		return MemoryStats{}, err
	}
	return s, nil
}

// usageWorkingSet reads the group's usage and its working set (usage less
// inactive page cache) from dir d of its memory controller, version v.
func (g *group) usageWorkingSet(d string, v Version) (usage, ws int64, err error) {
	usageFile, inactive := "memory.usage_in_bytes", "total_inactive_file"
	if v != V1 {
		usageFile, inactive = "memory.current", "inactive_file"
	}
	u, err := g.hot().int(filepath.Join(d, usageFile))
	if err != nil {
		return 0, 0, fmt.Errorf("reading memory of %s: %w", g.path, err)
	}
	st, err := g.hot().flatKeyed(filepath.Join(d, "memory.stat"))
	if err != nil {
		return 0, 0, fmt.Errorf("reading memory of %s: %w", g.path, err)
	}
	return u, workingSet(u, st[inactive]), nil
}

func memoryV1(d string) (MemoryStats, error) {
	var s MemoryStats
	var err error
	if s.Usage, err = readInt(filepath.Join(d, "memory.usage_in_bytes")); err != nil {
		return s, err
	}
	if s.Stat, err = readFlatKeyed(filepath.Join(d, "memory.stat")); err != nil {
		return s, err
	}
	s.WorkingSet = workingSet(s.Usage, s.Stat["total_inactive_file"])
	if s.Peak, err = readInt(filepath.Join(d, "memory.max_usage_in_bytes")); err != nil {
		return s, err
	}
	if sw, err := readInt(filepath.Join(d, "memory.memsw.usage_in_bytes")); err == nil {
		s.Swap = max(sw-s.Usage, 0)
	} else if !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	if s.Limit, err = readInt(filepath.Join(d, "memory.limit_in_bytes")); err != nil {
		return s, err
	}
	if s.Limit >= unlimitedV1 {
		s.Limit = -1
	}
	oc, err := readFlatKeyed(filepath.Join(d, "memory.oom_control"))
	if err != nil {
		return s, err
	}
	s.OOMKills = oc["oom_kill"]
	// With swap accounting a charge fails at memsw's limit first (runc
	// sets it to the memory limit): either counter is a hit.
	for _, f := range []string{"memory.failcnt", "memory.memsw.failcnt"} {
		n, err := readOptionalInt(filepath.Join(d, f))
		if err != nil {
			return s, err
		}
		s.LimitHits += n
	}
	return s, nil
}

func (g *group) memoryV2(d string) (MemoryStats, error) {
	var s MemoryStats
	var err error
	if s.Usage, err = readInt(filepath.Join(d, "memory.current")); err != nil {
		return s, err
	}
	if s.Stat, err = readFlatKeyed(filepath.Join(d, "memory.stat")); err != nil {
		return s, err
	}
	s.WorkingSet = workingSet(s.Usage, s.Stat["inactive_file"])
	if s.Peak, err = g.readPeakV2(d); err != nil {
		return s, err
	}
	if s.Swap, err = readOptionalInt(filepath.Join(d, "memory.swap.current")); err != nil {
		return s, err
	}
	lim, err := readString(filepath.Join(d, "memory.max"))
	if err != nil {
		return s, err
	}
	if s.Limit, err = parseMax(lim); err != nil {
		return s, err
	}
	ev, err := readFlatKeyed(filepath.Join(d, "memory.events"))
	if err != nil {
		return s, err
	}
	s.OOMKills = ev["oom_kill"]
	s.LimitHits = ev["max"] // hierarchical: the local count is preferred
	if local, err := readFlatKeyed(filepath.Join(d, "memory.events.local")); err == nil {
		s.LimitHits = local["max"]
	}
	return s, nil
}

// readPeakV2 reads memory.peak, through the fd ResetPeak left open if any
// (on v2 a reset applies only to reads through the fd that wrote it).
func (g *group) readPeakV2(d string) (int64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.peak != nil {
		buf := make([]byte, 64)
		n, err := g.peak.ReadAt(buf, 0)
		if err != nil && err != io.EOF {
			return 0, err
		}
		return parseInt(strings.TrimSpace(string(buf[:n])))
	}
	return readOptionalInt(filepath.Join(d, "memory.peak"))
}

// readOptionalInt reads an integer file, 0 when the kernel lacks it.
func readOptionalInt(p string) (int64, error) { return reader(readControl).optionalInt(p) }

// parseMax parses a v2 limit: "max" is -1.
func parseMax(s string) (int64, error) {
	if s == "max" {
		return -1, nil
	}
	return parseInt(s)
}

// workingSet is usage less inactive file cache, floored at 0 (kubelet's
// definition: inactive file pages are reclaimable without I/O on the task).
func workingSet(usage, inactiveFile int64) int64 {
	return max(usage-inactiveFile, 0)
}

// ResetPeak resets the peak counter. v1 writes 0 to memory.max_usage_in_bytes.
// v2 (Linux 6.12+) writes to memory.peak; the kernel scopes that reset to
// the open file, so the group keeps it open and later Memory calls read the
// peak through it. On v2 kernels without a writable memory.peak it is a no-op.
func (g *group) ResetPeak() error {
	d, v, err := g.dir(Memory)
	if err != nil {
		return err
	}
	if v == V1 {
		if err := g.write(filepath.Join(d, "memory.max_usage_in_bytes"), "0"); err != nil {
			return fmt.Errorf("resetting peak of %s: %w", g.path, err)
		}
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.peak
	if f == nil {
		f, err = os.OpenFile(filepath.Join(d, "memory.peak"), os.O_RDWR, 0)
		if err != nil {
			return nil // no memory.peak, or read-only: nothing to reset
		}
	}
	if _, err := f.WriteAt([]byte("reset\n"), 0); err != nil {
		if f != g.peak {
			f.Close()
		}
		return nil // kernel before 6.12: memory.peak is not resettable
	}
	g.peak = f
	return nil
}
