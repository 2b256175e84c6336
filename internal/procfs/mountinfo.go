package procfs

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Mount is one line of /proc/PID/mountinfo.
type Mount struct {
	Dev        uint64 // st_dev of the mount's files (field 3, major:minor)
	Root       string // root of the mount within its file system
	MountPoint string // in the reading process's mount namespace
	// MountOptions are the per-mount options (field 6: rw, nosuid, nodev,
	// relatime, ...), split at commas.
	MountOptions []string
	FSType       string
	Source       string
	Options      []string // super options, split at commas, still escaped
}

// Option returns the value of the super option key ("lowerdir" of
// "lowerdir=/a:/b"), unescaped, and whether it is there.
func (m Mount) Option(key string) (string, bool) {
	for _, o := range m.Options {
		if v, ok := strings.CutPrefix(o, key+"="); ok {
			return Unescape(v), true
		}
	}
	return "", false
}

// ParseMountinfo parses the text of /proc/PID/mountinfo.
func ParseMountinfo(r io.Reader) ([]Mount, error) {
	var out []Mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		pre, post, ok := strings.Cut(text, " - ")
		if !ok {
			return nil, fmt.Errorf("mountinfo line %d: no separator", line)
		}
		pf := strings.Fields(pre)
		sf := strings.Fields(post)
		if len(pf) < 5 || len(sf) < 1 {
			return nil, fmt.Errorf("mountinfo line %d: too few fields", line)
		}
		dev, err := parseDev(pf[2])
		if err != nil {
			return nil, fmt.Errorf("mountinfo line %d: %w", line, err)
		}
		m := Mount{Dev: dev, Root: Unescape(pf[3]), MountPoint: Unescape(pf[4]), FSType: sf[0]}
		if len(pf) >= 6 {
			m.MountOptions = strings.Split(pf[5], ",")
		}
		if len(sf) >= 2 {
			m.Source = Unescape(sf[1])
		}
		if len(sf) >= 3 {
			m.Options = strings.Split(sf[2], ",")
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading mountinfo: %w", err)
	}
	return out, nil
}

// parseDev parses "major:minor" into st_dev's encoding.
func parseDev(s string) (uint64, error) {
	ma, mi, ok := strings.Cut(s, ":")
	major, err1 := strconv.ParseUint(ma, 10, 32)
	minor, err2 := strconv.ParseUint(mi, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("device %q is not major:minor", s)
	}
	return mkdev(uint32(major), uint32(minor)), nil
}
