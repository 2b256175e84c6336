package swap

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tenon-dev/tenon/internal/procfs"
)

// SwapEntry is one line of /proc/swaps.
type SwapEntry struct {
	Filename string // e.g. /dev/zram0 (octal escapes such as \040 decoded)
	Type     string // partition or file
	Size     int64  // bytes
	Used     int64  // bytes
	Priority int
}

// ParseSwaps parses the text of /proc/swaps.
func ParseSwaps(r io.Reader) ([]SwapEntry, error) {
	sc := bufio.NewScanner(r)
	var out []SwapEntry
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || (line == 1 && f[0] == "Filename") {
			continue
		}
		if len(f) != 5 {
			return nil, fmt.Errorf("parsing /proc/swaps line %d %q: want 5 fields, got %d", line, sc.Text(), len(f))
		}
		size, err1 := strconv.ParseInt(f[2], 10, 64)
		used, err2 := strconv.ParseInt(f[3], 10, 64)
		prio, err3 := strconv.Atoi(f[4])
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("parsing /proc/swaps line %d %q: bad number", line, sc.Text())
		}
		out = append(out, SwapEntry{Filename: procfs.Unescape(f[0]), Type: f[1], Size: size << 10, Used: used << 10, Priority: prio})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading /proc/swaps: %w", err)
	}
	return out, nil
}

// findSwap returns the entry for device dev (e.g. "zram0"), matched by
// path or by base name, or nil.
func findSwap(entries []SwapEntry, devPath, dev string) *SwapEntry {
	for i := range entries {
		if entries[i].Filename == devPath || filepath.Base(entries[i].Filename) == dev {
			return &entries[i]
		}
	}
	return nil
}
