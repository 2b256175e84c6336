package cgroup

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// readString reads a control file and trims surrounding whitespace.
func readString(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return string(bytes.TrimSpace(b)), nil
}

// readInt reads a control file holding one integer.
func readInt(path string) (int64, error) {
	s, err := readString(path)
	if err != nil {
		return 0, err
	}
	return parseInt(s)
}

func parseInt(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err == nil {
		return v, nil
	}
	// Limits on v1 may exceed int64 on some kernels; clamp them.
	if _, uerr := strconv.ParseUint(s, 10, 64); uerr == nil {
		return math.MaxInt64, nil
	}
	return 0, fmt.Errorf("parsing %q: %w", s, err)
}

// writeFile writes a control file. The kernel accepts one value per write.
func writeFile(path, value string) error { return writeFileFlags(path, value, 0) }

// writeFileFlags is writeFile opening the file with flag added.
func writeFileFlags(path, value string, flag int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|os.O_CREATE|flag, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(value)
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

// ParseFlatKeyed parses "key value" lines (memory.stat, cpu.stat,
// memory.events, memory.oom_control). Lines whose value is not an integer
// are skipped.
func ParseFlatKeyed(r io.Reader) (map[string]int64, error) {
	m := make(map[string]int64)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		m[f[0]] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading flat-keyed file: %w", err)
	}
	return m, nil
}

// readFlatKeyed opens path and parses it with ParseFlatKeyed.
func readFlatKeyed(path string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseFlatKeyed(f)
}

// ParsePids parses cgroup.procs: one pid a line.
func ParsePids(r io.Reader) ([]int, error) {
	var pids []int
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		p, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("parsing pid %q: %w", s, err)
		}
		pids = append(pids, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading pids: %w", err)
	}
	return pids, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
