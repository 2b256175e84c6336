package app

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/cgroup"
)

// TestHarnessReplayNothing: with nothing to replay the run fails before it
// touches swap, cgroups or sandboxes; without root it fails before that,
// with cgroup.ErrNotRoot. (With Swap 0 it could only fail past that point,
// never set zram up.)
func TestHarnessReplayNothing(t *testing.T) {
	_, err := HarnessReplay(context.Background(), HarnessConfig{})
	switch root := os.Geteuid() == 0; {
	case !root && !errors.Is(err, cgroup.ErrNotRoot):
		t.Fatalf("HarnessReplay without root: %v, want cgroup.ErrNotRoot", err)
	case root && (err == nil || !strings.Contains(err.Error(), "nothing to replay")):
		t.Fatalf("HarnessReplay with no workflows: %v, want nothing to replay", err)
	}
}
