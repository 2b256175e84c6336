package pageout

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Mapping is one line of /proc/PID/maps.
type Mapping struct {
	Start, End uint64
	Perms      string // e.g. "rw-p"
	Inode      uint64
	Path       string // "" for anonymous memory, "[heap]", a file, ...
}

// Size is the mapping's length in bytes.
func (m Mapping) Size() uint64 { return m.End - m.Start }

// Private says whether the mapping is private (copy on write).
func (m Mapping) Private() bool { return len(m.Perms) == 4 && m.Perms[3] == 'p' }

// ParseMaps parses /proc/PID/maps.
func ParseMaps(r io.Reader) ([]Mapping, error) {
	var out []Mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		f := strings.Fields(text)
		if len(f) < 5 {
			return nil, fmt.Errorf("maps line %d: too few fields in %q", line, text)
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			return nil, fmt.Errorf("maps line %d: bad range %q", line, f[0])
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		inode, err3 := strconv.ParseUint(f[4], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || end < start {
			return nil, fmt.Errorf("maps line %d: bad numbers in %q", line, text)
		}
		m := Mapping{Start: start, End: end, Perms: f[1], Inode: inode}
		if len(f) > 5 {
			// The path is everything after the fifth field, spaces included.
			m.Path = strings.TrimSpace(afterFields(text, 5))
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading maps: %w", err)
	}
	return out, nil
}

// Anon says whether a mapping may hold the process's private anonymous
// memory: private and either anonymous, heap, stack, named anonymous, or a
// writable file mapping (written pages are anonymous copies). Inaccessible
// (---p) reservations, kernel
// special mappings ([vdso], [vvar], [vsyscall]) and shared mappings are out.
func (m Mapping) Anon() bool {
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

// AnonRanges returns the mappings of ms for which Anon holds.
func AnonRanges(ms []Mapping) []Mapping {
	var out []Mapping
	for _, m := range ms {
		if m.Anon() && m.Size() > 0 {
			out = append(out, m)
		}
	}
	return out
}

// afterFields returns s after its first n space-separated fields.
func afterFields(s string, n int) string {
	for range n {
		s = strings.TrimLeft(s, " \t")
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			return ""
		}
		s = s[i:]
	}
	return s
}
