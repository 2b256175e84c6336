package procfs

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrStatFormat means a /proc/PID/stat line is malformed or too short.
var ErrStatFormat = errors.New("procfs: malformed stat line")

// StatField returns field n of a /proc/PID/stat line, numbered as proc(5)
// numbers them (1 pid, 2 comm, 3 state, 4 ppid, 22 starttime). comm may
// hold spaces and parentheses, so the fields after it count from its last
// ')'; n = 2 returns comm without its parentheses.
func StatField(stat []byte, n int) (string, error) {
	open, close := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || close < open || n < 1 {
		return "", ErrStatFormat
	}
	switch n {
	case 1:
		return string(bytes.TrimSpace(stat[:open])), nil
	case 2:
		return string(stat[open+1 : close]), nil
	}
	f := bytes.Fields(stat[close+1:])
	if n-3 >= len(f) {
		return "", fmt.Errorf("%w: no field %d", ErrStatFormat, n)
	}
	return string(f[n-3]), nil
}
