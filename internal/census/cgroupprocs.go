package census

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ParseProcs parses a cgroup.procs (or tasks) file: one pid per line.
func ParseProcs(r io.Reader) ([]int, error) {
	var out []int
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		pid, err := strconv.Atoi(s)
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("cgroup.procs: bad pid %q", s)
		}
		out = append(out, pid)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading cgroup.procs: %w", err)
	}
	return out, nil
}

// CgroupPids lists the processes of a cgroup directory and all its
// descendants (works for v1 and v2 hierarchies alike).
func CgroupPids(dir string) ([]int, error) {
	var out []int
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != dir {
				return nil // a child cgroup went away while walking
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		f, err := os.Open(filepath.Join(p, "cgroup.procs"))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		defer f.Close()
		pids, err := ParseProcs(f)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, pids...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing pids of cgroup %s: %w", dir, err)
	}
	return out, nil
}
