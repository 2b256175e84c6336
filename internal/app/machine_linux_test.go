package app

import (
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/swap"
)

func TestSwapSummary(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		in   []swap.SwapEntry
		want string
	}{
		{nil, "no swap"},
		{[]swap.SwapEntry{{Filename: "/dev/zram0", Type: "partition", Size: 4 * gib}}, "swap 4.00 GiB (zram)"},
		{[]swap.SwapEntry{
			{Filename: "/dev/zram0", Type: "partition", Size: 4 * gib},
			{Filename: "/dev/sda2", Type: "partition", Size: 2 * gib},
			{Filename: "/swapfile", Type: "file", Size: gib},
			{Filename: "/dev/zram1", Type: "partition", Size: gib},
		}, "swap 8.00 GiB (zram, partition, file)"},
	} {
		if got := swapSummary(c.in); got != c.want {
			t.Errorf("swapSummary(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestHostNamesSwap(t *testing.T) {
	h := Host()
	if !strings.HasSuffix(h, "no swap") && !strings.Contains(h, ", swap ") {
		t.Fatalf("Host() = %q: names no swap state", h)
	}
}
