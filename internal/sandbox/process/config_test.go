//go:build linux

package process

import (
	"testing"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// TestPidsMaxDefault: a Config without PidsMax caps each sandbox at
// DefaultPidsMax (TestHostileForkBomb runs its bomb under a smaller cap).
func TestPidsMaxDefault(t *testing.T) {
	for _, tc := range []struct{ set, want int64 }{{0, DefaultPidsMax}, {64, 64}, {-1, -1}} {
		c := Config{StateDir: t.TempDir(), Layout: &cgroup.Layout{}, CgroupParent: "tenon", PidsMax: tc.set}
		if err := c.fill(); err != nil {
			t.Fatal(err)
		}
		if c.PidsMax != tc.want {
			t.Errorf("PidsMax %d filled as %d, want %d", tc.set, c.PidsMax, tc.want)
		}
	}
}
