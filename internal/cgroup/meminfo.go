package cgroup

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ParseMemTotal returns MemTotal in bytes from a /proc/meminfo file.
func ParseMemTotal(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != "MemTotal" {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			break
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing MemTotal %q: %w", v, err)
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		return n, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("reading meminfo: %w", err)
	}
	return 0, fmt.Errorf("meminfo: no MemTotal line")
}

// MemTotal reads <procRoot>/meminfo.
func MemTotal(procRoot string) (int64, error) {
	f, err := os.Open(filepath.Join(procRoot, "meminfo"))
	if err != nil {
		return 0, fmt.Errorf("reading machine memory: %w", err)
	}
	defer f.Close()
	return ParseMemTotal(f)
}
