package pageout

import (
	"strings"

	"github.com/tenon-dev/tenon/internal/procfs"
)

// anon says whether a mapping may hold the process's private anonymous
// memory: private and either anonymous, heap, stack, named anonymous, or a
// writable file mapping (written pages are anonymous copies). Inaccessible
// (---p) reservations, kernel special mappings ([vdso], [vvar], [vsyscall])
// and shared mappings are out.
func anon(m procfs.Mapping) bool {
	if !m.Private() || strings.HasPrefix(m.Perms, "---") {
		return false
	}
	switch {
	case m.Path == "", m.Path == "[heap]", strings.HasPrefix(m.Path, "[stack"), strings.HasPrefix(m.Path, "[anon:"):
		return true
	case strings.HasPrefix(m.Path, "["):
		return false
	}
	return len(m.Perms) >= 2 && m.Perms[1] == 'w'
}

// AnonRanges returns the non-empty mappings of ms that may hold private
// anonymous memory: what PageOut pages out and PageIn prefetches.
func AnonRanges(ms []procfs.Mapping) []procfs.Mapping {
	var out []procfs.Mapping
	for _, m := range ms {
		if anon(m) && m.Size() > 0 {
			out = append(out, m)
		}
	}
	return out
}
