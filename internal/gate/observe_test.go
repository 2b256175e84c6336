package gate

import (
	"testing"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

func TestFootprintOf(t *testing.T) {
	if got := FootprintOf(cgroup.MemoryStats{Usage: 300 * MiB, WorkingSet: 200 * MiB, Swap: 50 * MiB}); got != 350*MiB {
		t.Errorf("FootprintOf = %d MiB, want usage + swap = 350", got/MiB)
	}
}

func TestAvailableOf(t *testing.T) {
	tests := []struct {
		name   string
		budget int64
		stats  cgroup.MemoryStats
		want   int64
	}{
		{"budget minus working set, not usage", 1000 * MiB, cgroup.MemoryStats{Usage: 900 * MiB, WorkingSet: 600 * MiB}, 400 * MiB},
		{"floored at zero", 1000 * MiB, cgroup.MemoryStats{WorkingSet: 1200 * MiB}, 0},
		{"falls back to the group limit", 0, cgroup.MemoryStats{WorkingSet: 100 * MiB, Limit: 500 * MiB}, 400 * MiB},
		{"unlimited without a budget", 0, cgroup.MemoryStats{WorkingSet: 100 * MiB, Limit: -1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AvailableOf(tt.budget, tt.stats); got != tt.want {
				t.Errorf("AvailableOf = %d MiB, want %d", got/MiB, tt.want/MiB)
			}
		})
	}
}
