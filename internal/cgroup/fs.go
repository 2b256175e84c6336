package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// readControl reads a control file whole with plain system calls: open, read
// until the end, close. os.ReadFile takes seven on cgroupfs: its files are
// pollable, so os.File registers each with Go's poller and removes it again
// (two epoll_ctl), and ReadFile sizes its buffer with fstat. The gate loop
// reads several files of every sandbox each period, and on a host whose
// system calls are expensive (a PVM guest) that was a third of the live
// controller's CPU.
//
// A first read shorter than its buffer (firstRead bytes) is the whole file
// and ends it, one read fewer: a control file (a seq_file) fills a read
// until the buffer is full, its content ends, or its own page-sized buffer
// is (which a read of under firstRead bytes cannot reach), and a regular
// file (a test's fake hierarchy) is short only at its end.
func readControl(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	b := make([]byte, 0, firstRead)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
		if cap(b) == firstRead && len(b) < firstRead {
			return b, nil
		}
	}
}

// firstRead is readControl's first buffer: most control files are shorter.
const firstRead = 512

// reader reads a control file whole: readControl, or a group's hot read
// through a file it keeps open (hot.go). Its methods parse what it reads.
type reader func(path string) ([]byte, error)

// str reads a control file and trims surrounding whitespace.
func (r reader) str(path string) (string, error) {
	b, err := r(path)
	if err != nil {
		return "", err
	}
	return string(bytes.TrimSpace(b)), nil
}

// int reads a control file holding one integer.
func (r reader) int(path string) (int64, error) {
	s, err := r.str(path)
	if err != nil {
		return 0, err
	}
	return parseInt(s)
}

// optionalInt reads an integer file, 0 when the kernel lacks it.
func (r reader) optionalInt(path string) (int64, error) {
	v, err := r.int(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	return v, err
}

// flatKeyed reads path and parses it with ParseFlatKeyed.
func (r reader) flatKeyed(path string) (map[string]int64, error) {
	b, err := r(path)
	if err != nil {
		return nil, err
	}
	return ParseFlatKeyed(bytes.NewReader(b))
}

// readString reads a control file and trims surrounding whitespace.
func readString(path string) (string, error) { return reader(readControl).str(path) }

// readInt reads a control file holding one integer.
func readInt(path string) (int64, error) { return reader(readControl).int(path) }

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

// writeFileFlags is writeFile opening the file with flag added. It writes
// with plain system calls, not through an *os.File: cgroupfs files are
// pollable, so os.File registers them with Go's poller, and a write the
// kernel answers with EAGAIN (memory.reclaim when it could not reclaim the
// whole amount) then waits for the file to become writable, which never
// happens (in the cgroup v2 VM suite a tool scope's Drop hung there until
// the test's timeout). Here EAGAIN is returned to the caller.
func writeFileFlags(path, value string, flag int) error {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_TRUNC|syscall.O_CREAT|syscall.O_CLOEXEC|flag, 0o644)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	b := []byte(value)
	var werr error
	for len(b) > 0 {
		n, err := syscall.Write(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			werr = &os.PathError{Op: "write", Path: path, Err: err}
			break
		}
		b = b[n:]
	}
	cerr := syscall.Close(fd)
	if werr != nil {
		return werr
	}
	if cerr != nil {
		return &os.PathError{Op: "close", Path: path, Err: cerr}
	}
	return nil
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

// readFlatKeyed reads path and parses it with ParseFlatKeyed.
func readFlatKeyed(path string) (map[string]int64, error) {
	return reader(readControl).flatKeyed(path)
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
