package harness

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func TestTotal(t *testing.T) {
	pair := func(set string, bRAM, iRAM float64, bT, iT time.Duration, paged float64) Pair {
		return Pair{Set: set,
			Baseline: Result{Workflow: "w", RAMMiBs: bRAM, BackingMiBs: bRAM, HarnessTime: bT, Verified: true},
			Intents:  Result{Workflow: "w", RAMMiBs: iRAM, BackingMiBs: iRAM * 1.1, HarnessTime: iT, Suspensions: 2, PagedOut: paged, Verified: true}}
	}
	pairs := []Pair{
		pair("swe", 100, 40, 10*time.Second, 11*time.Second, 0.9),
		pair("swe", 300, 200, 30*time.Second, 30*time.Second, 0.85),
		pair("traces", 50, 50, 5*time.Second, 5*time.Second, 0.95),
	}
	tests := []struct {
		name                          string
		set                           string
		wantN                         int
		wantRAM, wantBacking, wantInc float64
		wantPaged                     float64
	}{
		{"one set", "swe", 2, 1 - 240.0/400, 1 - 264.0/400, 41.0/40 - 1, 0.85},
		{"all", "", 3, 1 - 290.0/450, 1 - 319.0/450, 46.0/45 - 1, 0.85},
		{"none", "absent", 0, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Total(pairs, tt.set)
			near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
			if got.Workflows != tt.wantN || !near(got.RAMReduction, tt.wantRAM) || !near(got.BackingReduction, tt.wantBacking) ||
				!near(got.TimeIncrease, tt.wantInc) || !near(got.MinPagedOut, tt.wantPaged) || !got.AllVerified {
				t.Fatalf("Total = %+v", got)
			}
		})
	}
	var buf bytes.Buffer
	WriteTable(&buf, pairs, []Totals{Total(pairs, "")})
	if lines := strings.Count(buf.String(), "\n"); lines != 6 {
		t.Fatalf("table has %d lines, want 6:\n%s", lines, buf.String())
	}
}
