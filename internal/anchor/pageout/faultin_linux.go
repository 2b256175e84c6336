//go:build linux

package pageout

import (
	"encoding/binary"
	"io"
	"os"

	"github.com/tenon-dev/tenon/internal/procfs"
)

// pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst).
const (
	pmPresent = 1 << 63
	pmSwapped = 1 << 62
)

// faultIn reads the swapped pages of ranges through /proc/PID/mem, which
// faults each back into pid's page tables (get_user_pages), and returns the
// bytes read and the bytes of swapped pages it could not read: a fault the
// kernel takes on the process's behalf fails when its memory cgroup cannot
// charge the page (at its limit under the v1 OOM hold, oom_kill_disable).
// /proc/PID/pagemap picks the swapped pages, so memory the process never
// touched is not populated.
func (p *Pager) faultIn(pid int, ranges []procfs.Mapping) (faulted, missed int64, err error) {
	pm, err := os.Open(p.proc(pid, "pagemap"))
	if err != nil {
		return 0, 0, err
	}
	defer pm.Close()
	mem, err := os.Open(p.proc(pid, "mem"))
	if err != nil {
		return 0, 0, err
	}
	defer mem.Close()
	page := uint64(os.Getpagesize())
	const chunkPages = 256
	entries := make([]byte, 8*chunkPages)
	buf := make([]byte, chunkPages*page)
	for _, r := range ranges {
		for addr := r.Start; addr < r.End; addr += chunkPages * page {
			n := min(chunkPages, (r.End-addr)/page)
			got, err := pm.ReadAt(entries[:8*n], int64(addr/page*8))
			if err != nil && err != io.EOF {
				break // range vanished: go on with the next
			}
			runs := swappedRuns(entries[:got], addr, page)
			for _, run := range runs {
				k, _ := mem.ReadAt(buf[:run[1]-run[0]], int64(run[0]))
				faulted += int64(k)
				missed += int64(run[1]-run[0]) - int64(k)
			}
		}
	}
	return faulted, missed, nil
}

// swappedRuns returns [start, end) address runs of pagemap entries (for
// pages starting at addr) that are swapped out and not present.
func swappedRuns(entries []byte, addr, page uint64) [][2]uint64 {
	var runs [][2]uint64
	for i := 0; i+8 <= len(entries); i += 8 {
		e := binary.LittleEndian.Uint64(entries[i:])
		if e&pmSwapped == 0 || e&pmPresent != 0 {
			continue
		}
		a := addr + uint64(i/8)*page
		if n := len(runs); n > 0 && runs[n-1][1] == a {
			runs[n-1][1] = a + page
			continue
		}
		runs = append(runs, [2]uint64{a, a + page})
	}
	return runs
}
