package swap

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/tenon-dev/tenon/internal/procfs"
)

// MMStat is the memory accounting of a zram device (/sys/block/zramN/mm_stat).
// All sizes are bytes; page counts are pages.
type MMStat struct {
	OrigDataSize   int64 // uncompressed size of the data stored
	ComprDataSize  int64 // compressed size of the data stored
	MemUsedTotal   int64 // memory the device uses, including allocator overhead
	MemLimit       int64 // mem_limit, 0 for none
	MemUsedMax     int64 // highest MemUsedTotal seen
	SamePages      int64 // same-filled pages stored without memory
	PagesCompacted int64 // pages freed by compaction
	HugePages      int64 // incompressible pages (newer kernels; 0 if absent)
	HugePagesSince int64 // incompressible pages since init (newer kernels; 0 if absent)
}

// ParseMMStat parses mm_stat: one line of at least seven numbers.
func ParseMMStat(r io.Reader) (MMStat, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return MMStat{}, fmt.Errorf("reading mm_stat: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) < 7 {
		return MMStat{}, fmt.Errorf("parsing mm_stat %q: want at least 7 numbers, got %d", strings.TrimSpace(string(b)), len(f))
	}
	var v [9]int64
	for i := 0; i < len(f) && i < len(v); i++ {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return MMStat{}, fmt.Errorf("parsing mm_stat field %d %q: %w", i+1, f[i], err)
		}
		v[i] = n
	}
	return MMStat{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]}, nil
}

// ParseCompAlgorithm parses comp_algorithm ("lzo [lz4] zstd"): the
// algorithms offered and the selected one.
func ParseCompAlgorithm(r io.Reader) (avail []string, current string, err error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, "", fmt.Errorf("reading comp_algorithm: %w", err)
	}
	for _, f := range strings.Fields(string(b)) {
		if strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]") {
			f = f[1 : len(f)-1]
			current = f
		}
		avail = append(avail, f)
	}
	return avail, current, nil
}

// pickAlgorithm returns the first of the preferred algorithms on offer, or "".
func pickAlgorithm(avail []string, preferred ...string) string {
	for _, p := range preferred {
		for _, a := range avail {
			if a == p {
				return a
			}
		}
	}
	return ""
}

// mountedDevice reports whether a /proc/self/mounts text mounts devPath.
func mountedDevice(r io.Reader, devPath string) (bool, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 && procfs.Unescape(f[0]) == devPath {
			return true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("reading mounts: %w", err)
	}
	return false, nil
}

// MMStat reads the device's mm_stat alone (cheaper than Status, for
// frequent readers); ok is false when the device is absent or not
// initialized.
func (m *Manager) MMStat() (mm MMStat, ok bool, err error) {
	f, err := os.Open(m.Paths.sys(m.Device, "mm_stat"))
	if errors.Is(err, os.ErrNotExist) {
		return MMStat{}, false, nil
	}
	if err != nil {
		return MMStat{}, false, err
	}
	defer f.Close()
	if mm, err = ParseMMStat(f); err != nil {
		return MMStat{}, false, err
	}
	return mm, mm.OrigDataSize > 0 || mm.MemUsedTotal > 0, nil
}

// Cost is the host memory the compressed copy of stored bytes of swapped
// data takes: their share of MemUsedTotal (allocator overhead included) at
// the device's average ratio, at most MemUsedTotal. 0 when the device
// stores nothing.
func (s MMStat) Cost(stored int64) int64 {
	if s.OrigDataSize <= 0 || stored <= 0 {
		return 0
	}
	return min(int64(float64(stored)*float64(s.MemUsedTotal)/float64(s.OrigDataSize)), s.MemUsedTotal)
}
