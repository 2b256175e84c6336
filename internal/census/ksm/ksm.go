package ksm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultDir is where the kernel exposes KSM.
const DefaultDir = "/sys/kernel/mm/ksm"

// Stats is one reading of the KSM counters.
type Stats struct {
	Run           int64 // 0 stopped, 1 running, 2 stopped and unmerged
	PagesShared   int64 // shared pages in use (one per merged content)
	PagesSharing  int64 // additional sites sharing them (pages saved)
	PagesUnshared int64 // unique pages checked repeatedly
	PagesVolatile int64 // pages changing too fast to merge
	FullScans     int64 // completed scans of all mergeable areas
	ZeroPages     int64 // ksm_zero_pages (0 where absent)
}

// SavedBytes is the memory KSM saves: pages_sharing pages.
func (s Stats) SavedBytes(pageSize int) int64 { return s.PagesSharing * int64(pageSize) }

// Settings tune the scanner; zero fields keep the current value.
type Settings struct {
	PagesToScan    int64
	SleepMillisecs int64
}

// KSM is the sysfs interface of kernel same-page merging.
type KSM struct{ Dir string }

// New returns the interface at dir ("" means DefaultDir).
func New(dir string) *KSM {
	if dir == "" {
		dir = DefaultDir
	}
	return &KSM{Dir: dir}
}

// ParseValue parses one integer sysfs file.
func ParseValue(r io.Reader) (int64, error) {
	b, err := io.ReadAll(io.LimitReader(r, 64))
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parsing %q: %w", strings.TrimSpace(string(b)), err)
	}
	return v, nil
}

func (k *KSM) read(name string) (int64, error) {
	f, err := os.Open(filepath.Join(k.Dir, name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && name == "run" {
			return 0, fmt.Errorf("%w: %v", ErrNotSupported, err)
		}
		return 0, fmt.Errorf("reading ksm %s: %w", name, err)
	}
	defer f.Close()
	v, err := ParseValue(f)
	if err != nil {
		return 0, fmt.Errorf("reading ksm %s: %w", name, err)
	}
	return v, nil
}

func (k *KSM) write(name string, v int64) error {
	if err := os.WriteFile(filepath.Join(k.Dir, name), []byte(strconv.FormatInt(v, 10)), 0o644); err != nil {
		return fmt.Errorf("writing ksm %s=%d: %w", name, v, err)
	}
	return nil
}

// Read returns the current counters.
func (k *KSM) Read() (Stats, error) {
	var s Stats
	fields := []struct {
		name     string
		dst      *int64
		optional bool
	}{
		{"run", &s.Run, false},
		{"pages_shared", &s.PagesShared, false},
		{"pages_sharing", &s.PagesSharing, false},
		{"pages_unshared", &s.PagesUnshared, false},
		{"pages_volatile", &s.PagesVolatile, false},
		{"full_scans", &s.FullScans, false},
		{"ksm_zero_pages", &s.ZeroPages, true},
	}
	for _, f := range fields {
		v, err := k.read(f.name)
		if err != nil {
			if f.optional && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return Stats{}, err
		}
		*f.dst = v
	}
	return s, nil
}

// Start applies settings and sets run=1. The returned restore puts back
// the run state and settings found before (call it even on later errors).
func (k *KSM) Start(set Settings) (restore func() error, err error) {
	prev := map[string]int64{}
	for _, name := range []string{"run", "pages_to_scan", "sleep_millisecs"} {
		v, err := k.read(name)
		if err != nil {
			return nil, err
		}
		prev[name] = v
	}
	restore = func() error {
		return errors.Join(
			k.write("pages_to_scan", prev["pages_to_scan"]),
			k.write("sleep_millisecs", prev["sleep_millisecs"]),
			k.write("run", prev["run"]),
		)
	}
	if set.PagesToScan > 0 {
		if err := k.write("pages_to_scan", set.PagesToScan); err != nil {
			return restore, err
		}
	}
	if set.SleepMillisecs > 0 {
		if err := k.write("sleep_millisecs", set.SleepMillisecs); err != nil {
			return restore, err
		}
	}
	return restore, k.write("run", 1)
}

// Stop sets run=0: the scanner stops, merged pages stay merged.
func (k *KSM) Stop() error { return k.write("run", 0) }

// WaitFullScans waits until n more full scans have completed since the
// call, polling every poll (default 50 ms), or until ctx is done
// (ErrTimeout wrapping the context error).
func (k *KSM) WaitFullScans(ctx context.Context, n int64, poll time.Duration) error {
	if poll <= 0 {
		poll = 50 * time.Millisecond
	}
	start, err := k.read("full_scans")
	if err != nil {
		return err
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		v, err := k.read("full_scans")
		if err != nil {
			return err
		}
		if v-start >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %d of %d scans: %w", ErrTimeout, v-start, n, ctx.Err())
		case <-t.C:
		}
	}
}
