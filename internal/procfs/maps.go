package procfs

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Mapping is one line of /proc/PID/maps.
type Mapping struct {
	Start, End   uint64 // [Start, End) virtual addresses
	Perms        string // e.g. "r-xp"; the fourth letter is 'p' (private) or 's' (shared)
	Offset       uint64 // file offset of Start
	Major, Minor uint32 // device of the backing file
	Inode        uint64 // 0 for anonymous and special mappings
	Path         string // backing file, "[heap]", "[stack]", "" for anonymous
}

// Dev is the device number in the kernel's user-space encoding (st_dev).
func (m Mapping) Dev() uint64 { return mkdev(m.Major, m.Minor) }

// Private reports a MAP_PRIVATE (copy-on-write) mapping.
func (m Mapping) Private() bool { return len(m.Perms) == 4 && m.Perms[3] == 'p' }

// Readable reports whether the mapping has read permission.
func (m Mapping) Readable() bool { return len(m.Perms) > 0 && m.Perms[0] == 'r' }

// Special reports kernel-provided mappings whose pages are neither page
// cache nor process-private memory ([vvar], [vdso], [vsyscall], ...).
func (m Mapping) Special() bool {
	switch m.Path {
	case "[vvar]", "[vvar_vclock]", "[vdso]", "[vsyscall]", "[uprobes]":
		return true
	}
	return false
}

// Size is the mapping's length in bytes.
func (m Mapping) Size() uint64 { return m.End - m.Start }

// mkdev encodes a device number as glibc's makedev does.
func mkdev(major, minor uint32) uint64 {
	ma, mi := uint64(major), uint64(minor)
	return (ma&0xfffff000)<<32 | (ma&0x00000fff)<<8 | (mi&0xffffff00)<<12 | mi&0x000000ff
}

// ParseMaps parses the text of /proc/PID/maps. The path is everything after
// the fifth field, spaces included.
func ParseMaps(r io.Reader) ([]Mapping, error) {
	var out []Mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, err := parseMapsLine(line)
		if err != nil {
			return nil, fmt.Errorf("maps line %d: %w", n, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading maps: %w", err)
	}
	return out, nil
}

func parseMapsLine(line string) (Mapping, error) {
	var f [5]string
	rest := line
	for i := range f {
		rest = strings.TrimLeft(rest, " \t")
		j := strings.IndexAny(rest, " \t")
		if j < 0 {
			if i < 4 {
				return Mapping{}, fmt.Errorf("%w: %q", ErrMapsFormat, line)
			}
			f[i], rest = rest, ""
			break
		}
		f[i], rest = rest[:j], rest[j:]
	}
	var m Mapping
	lo, hi, ok := strings.Cut(f[0], "-")
	if !ok {
		return m, fmt.Errorf("%w: address %q", ErrMapsFormat, f[0])
	}
	var err error
	if m.Start, err = strconv.ParseUint(lo, 16, 64); err != nil {
		return m, fmt.Errorf("%w: start %q", ErrMapsFormat, lo)
	}
	if m.End, err = strconv.ParseUint(hi, 16, 64); err != nil || m.End < m.Start {
		return m, fmt.Errorf("%w: end %q", ErrMapsFormat, hi)
	}
	if len(f[1]) != 4 {
		return m, fmt.Errorf("%w: perms %q", ErrMapsFormat, f[1])
	}
	m.Perms = f[1]
	if m.Offset, err = strconv.ParseUint(f[2], 16, 64); err != nil {
		return m, fmt.Errorf("%w: offset %q", ErrMapsFormat, f[2])
	}
	ma, mi, ok := strings.Cut(f[3], ":")
	if !ok {
		return m, fmt.Errorf("%w: device %q", ErrMapsFormat, f[3])
	}
	maj, err1 := strconv.ParseUint(ma, 16, 32)
	mnr, err2 := strconv.ParseUint(mi, 16, 32)
	if err1 != nil || err2 != nil {
		return m, fmt.Errorf("%w: device %q", ErrMapsFormat, f[3])
	}
	m.Major, m.Minor = uint32(maj), uint32(mnr)
	if m.Inode, err = strconv.ParseUint(f[4], 10, 64); err != nil {
		return m, fmt.Errorf("%w: inode %q", ErrMapsFormat, f[4])
	}
	m.Path = strings.TrimSpace(rest)
	return m, nil
}
