package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// HoldHigh is the memory.high of a v2 domain of budget bytes under the OOM
// hold: the budget less an eighth of it, the gate's red region.
//
// The kernel does not stop an allocator above memory.high: it reclaims
// from the group, and when that fails it puts the allocator to sleep after
// each batch it charges, for (overage/high)² × 64 s per 256 KiB charged
// (none under 10 ms, at most 2 s a time; mm/memcontrol.c,
// calculate_high_delay). So the gap between memory.high and memory.max
// must be wide for the throttling to hold: an eighth (overage up to
// 14 %) takes one allocator about 64·n·0.143³/3 s to cross, n the line in
// 256 KiB pages: some 7 minutes at 2 GiB, 55 s at 256 MiB, 14 s at
// 64 MiB (k allocators at once about k times sooner), during which it uses
// almost no CPU, so the hold's timeout (internal/policy) sees it waiting.
// A sixteenth was too narrow: in the VM suite four sandboxes of a 256 MiB
// domain crossed it to memory.max within 4.6 s of waiting, and one was
// killed under the hold. The line is the top of the gate's red region,
// where the gate already lets one grower at most.
func HoldHigh(budget int64) int64 { return budget - budget/8 }

// setHighHold sets the domain's memory.high to HoldHigh of its budget (on)
// or to max (off). The file is opened O_NONBLOCK (honoured by kernels
// from mid-2025 on; older ones ignore it): otherwise, when usage is
// already above the new line, the kernel reclaims down to it in the
// writer, the gate's loop, possibly into swap.
func (d *Domain) setHighHold(dir string, on bool) error {
	p := filepath.Join(dir, "memory.high")
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("%w (domain %s has no memory.high)", ErrNoOOMHold, d.group.path)
	}
	val := "max"
	if on {
		val = strconv.FormatInt(HoldHigh(d.budget), 10)
		d.stall.reset(dir) // the stall signal counts from the arming
	}
	if err := d.group.writeNoReclaim(p, val); err != nil {
		return fmt.Errorf("setting memory.high=%s on domain %s: %w", val, d.group.path, err)
	}
	return nil
}

// underHigh is UnderOOM on v2: memory.current above HoldHigh and tasks
// stalled on memory since the previous call. Usage above the line alone
// is not a wait (a sandbox at its peak that allocates no more is not
// throttled), nor is a stall below it (reclaim of page cache, a page-in).
func (d *Domain) underHigh(dir string) (bool, error) {
	stalled, err := d.stall.stalled(dir)
	if err != nil {
		return false, err
	}
	cur, err := readInt(filepath.Join(dir, "memory.current"))
	if err != nil {
		return false, fmt.Errorf("reading memory.current of %s: %w", d.group.path, err)
	}
	return stalled && cur > HoldHigh(d.budget), nil
}

// AboveHoldLine reports whether the domain's usage is above the v2 hold's
// line (memory.current above HoldHigh): where the freezing hold keeps the
// sandboxes it froze (policy's hold_freeze.go). On v1, whose hold stops
// allocators itself, it is UnderOOM.
func (d *Domain) AboveHoldLine() (bool, error) {
	dir, v, err := d.group.dir(Memory)
	if err != nil {
		return false, err
	}
	if v != V2 {
		return d.UnderOOM()
	}
	cur, err := readInt(filepath.Join(dir, "memory.current"))
	if err != nil {
		return false, fmt.Errorf("reading memory.current of %s: %w", d.group.path, err)
	}
	return cur > HoldHigh(d.budget), nil
}

// disarmHighHold sets memory.high back to max on a v2 group where a
// crashed run left it lower.
func disarmHighHold(g *group, dir string) (bool, error) {
	p := filepath.Join(dir, "memory.high")
	v, err := readString(p)
	if err != nil || v == "max" {
		return false, nil
	}
	if err := g.writeNoReclaim(p, "max"); err != nil {
		return false, fmt.Errorf("disarming the OOM hold of %s: %w", g.path, err)
	}
	return true, nil
}

// stallProbe says whether a group's tasks stalled on memory between two
// readings: its memory.pressure "some" total advanced (PSI: time during
// which at least one task waited for memory, reclaim and memory.high
// throttling included), or, where the group has no PSI (a kernel built
// without it or booted with psi=0, or cgroup.pressure 0), its
// memory.events "high" or "max" count did (reclaim at memory.high or
// memory.max).
type stallProbe struct {
	mu   sync.Mutex
	src  string // where last came from: "psi", "events"; "" before a reading
	last int64
}

// reset takes a new baseline (errors leave none: the next reading is one).
func (s *stallProbe) reset(dir string) {
	src, v, err := readStall(dir)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.src, s.last = "", 0
	if err == nil {
		s.src, s.last = src, v
	}
}

// stalled reports whether the group stalled since the previous reading;
// a first reading (or one from another source) only sets the baseline.
func (s *stallProbe) stalled(dir string) (bool, error) {
	src, v, err := readStall(dir)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	moved := s.src == src && v > s.last
	s.src, s.last = src, v
	return moved, nil
}

// readStall reads the stall counter of the group at dir: PSI's some total
// (microseconds), else the memory.events high + max count.
func readStall(dir string) (string, int64, error) {
	p, err := readPressure(filepath.Join(dir, "memory.pressure"))
	if err == nil {
		return "psi", p.SomeTotal.Microseconds(), nil
	}
	ev, eerr := readFlatKeyed(filepath.Join(dir, "memory.events"))
	if eerr != nil {
		return "", 0, fmt.Errorf("reading memory stalls: %w", errors.Join(err, eerr))
	}
	return "events", ev["high"] + ev["max"], nil
}
