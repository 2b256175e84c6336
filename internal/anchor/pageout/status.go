package pageout

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Residency is the memory of a process from /proc/PID/status, in bytes.
type Residency struct {
	RssAnon, RssFile, RssShmem, VmSwap int64
}

// ParseStatus reads the Rss* and VmSwap lines of /proc/PID/status.
func ParseStatus(r io.Reader) (Residency, error) {
	var res Residency
	fields := map[string]*int64{"RssAnon:": &res.RssAnon, "RssFile:": &res.RssFile, "RssShmem:": &res.RssShmem, "VmSwap:": &res.VmSwap}
	seen := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		p, ok := fields[f[0]]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return res, fmt.Errorf("parsing status %s %q: %w", f[0], f[1], err)
		}
		if len(f) > 2 && f[2] == "kB" {
			n <<= 10
		}
		*p = n
		seen++
	}
	if err := sc.Err(); err != nil {
		return res, fmt.Errorf("reading status: %w", err)
	}
	if seen == 0 {
		return res, fmt.Errorf("parsing status: no RssAnon/RssFile/VmSwap lines (kernel thread or exited process?)")
	}
	return res, nil
}
