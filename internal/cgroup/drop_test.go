package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// fakeMemcg simulates a memory group: force_empty and reclaim lower usage.
type fakeMemcg struct {
	usage     int64
	perRound  int64 // what one memory.reclaim write can reclaim; 0 = all asked
	floor     int64 // what can never be reclaimed (tmpfs without swap)
	writes    []string
	failWrite error
	noCurrent bool // memory.current does not exist
}

func (f *fakeMemcg) files() dropFiles {
	return dropFiles{
		write: func(path, value string) error {
			f.writes = append(f.writes, filepath.Base(path)+"="+value)
			if f.failWrite != nil {
				return f.failWrite
			}
			switch filepath.Base(path) {
			case "memory.force_empty":
				f.usage = f.floor
			case "memory.reclaim":
				want, _ := strconv.ParseInt(value, 10, 64)
				got := want
				if f.perRound > 0 && got > f.perRound {
					got = f.perRound
				}
				if f.usage-got < f.floor {
					got = f.usage - f.floor
				}
				f.usage -= got
				if got < want {
					return syscall.EAGAIN
				}
			}
			return nil
		},
		read: func(path string) (string, error) {
			switch filepath.Base(path) {
			case "memory.current":
				if f.noCurrent {
					return "", os.ErrNotExist
				}
				return strconv.FormatInt(f.usage, 10) + "\n", nil
			case "memory.usage_in_bytes":
				return strconv.FormatInt(f.usage, 10) + "\n", nil
			}
			return "", fmt.Errorf("unexpected read of %s: %w", path, os.ErrNotExist)
		},
	}
}

func TestDropMemory(t *testing.T) {
	tests := []struct {
		name      string
		version   Version
		memcg     fakeMemcg
		wantLeft  int64
		wantFirst string
		wantErr   bool
	}{
		{"v1 force_empty", V1, fakeMemcg{usage: 200 << 20}, 0, "memory.force_empty=0", false},
		{"v1 leaves tmpfs", V1, fakeMemcg{usage: 200 << 20, floor: 10 << 20}, 10 << 20, "memory.force_empty=0", false},
		{"v1 write fails", V1, fakeMemcg{usage: 1, failWrite: syscall.EBUSY}, 0, "memory.force_empty=0", true},
		{"v2 reclaim all", V2, fakeMemcg{usage: 200 << 20}, 0, "memory.reclaim=209715200", false},
		{"v2 partial rounds", V2, fakeMemcg{usage: 200 << 20, perRound: 64 << 20}, 0, "memory.reclaim=209715200", false},
		{"v2 floor", V2, fakeMemcg{usage: 200 << 20, floor: 1 << 20}, 1 << 20, "memory.reclaim=209715200", false},
		{"v2 empty", V2, fakeMemcg{usage: 0}, 0, "", false},
		{"v2 without memory controller", V2, fakeMemcg{usage: 5, noCurrent: true}, 0, "", false},
		{"v2 write fails", V2, fakeMemcg{usage: 5, failWrite: syscall.EINVAL}, 5, "memory.reclaim=5", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.memcg
			left, err := dropMemory("/fake/scope", tt.version, m.files())
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if left != tt.wantLeft {
				t.Errorf("left = %d, want %d", left, tt.wantLeft)
			}
			first := ""
			if len(m.writes) > 0 {
				first = m.writes[0]
			}
			if first != tt.wantFirst {
				t.Errorf("first write %q, want %q (all %q)", first, tt.wantFirst, m.writes)
			}
			if len(m.writes) > reclaimRounds {
				t.Errorf("%d writes, want at most %d", len(m.writes), reclaimRounds)
			}
		})
	}
}
