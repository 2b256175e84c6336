package cgroup

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// simulate makes the fake tree answer freezer writes like a kernel would:
// v1 freezer.state reads back what step returns for the written value; v2
// cgroup.events reports "frozen N" per step. step also sees how many writes
// came before.
func simulate(k *fakeKernel, step func(file, value string, n int) (stateV1 string, frozenV2 string)) {
	n := 0
	k.onWrite = func(p, v string) (string, error) {
		base := filepath.Base(p)
		if base != "freezer.state" && base != "cgroup.freeze" {
			return v, nil
		}
		s1, f2 := step(base, v, n)
		n++
		if base == "cgroup.freeze" {
			if f2 != "" {
				if err := writeFile(filepath.Join(filepath.Dir(p), "cgroup.events"), "populated 1\nfrozen "+f2+"\n"); err != nil {
					return "", err
				}
			}
			return v, nil
		}
		return s1, nil
	}
}

func TestFreezeThaw(t *testing.T) {
	tests := []struct {
		name       string
		v2         bool
		step       func(file, value string, n int) (string, string)
		timeout    time.Duration
		wantErr    error  // from Freeze
		wantFrozen bool   // Frozen() after Freeze
		wantFile   string // freezer.state / cgroup.freeze after Freeze
		wantWrites int    // writes to the freezer file during Freeze; 0 = don't check
	}{
		{
			name: "v1 freezes at once", step: func(_, v string, _ int) (string, string) { return v, "" },
			wantFrozen: true, wantFile: "FROZEN", wantWrites: 1,
		},
		{
			name: "v1 passes through FREEZING and is rewritten",
			step: func(_, v string, n int) (string, string) {
				if v == stateFrozen && n < 3 {
					return stateFreezing, ""
				}
				return v, ""
			},
			wantFrozen: true, wantFile: "FROZEN", wantWrites: 4,
		},
		{
			name: "v1 stuck in FREEZING times out and thaws back",
			step: func(_, v string, _ int) (string, string) {
				if v == stateFrozen {
					return stateFreezing, ""
				}
				return v, ""
			},
			timeout: 100 * time.Millisecond, wantErr: ErrFreezeTimeout, wantFrozen: false, wantFile: "THAWED",
		},
		{
			name: "v2 freezes", v2: true, step: func(_, v string, _ int) (string, string) { return "", v },
			wantFrozen: true, wantFile: "1", wantWrites: 1,
		},
		{
			name: "v2 never reports frozen, times out and thaws back", v2: true,
			step: func(_, v string, _ int) (string, string) {
				if v == "1" {
					return "", "" // events unchanged: still "frozen 0"
				}
				return "", v
			},
			timeout: 100 * time.Millisecond, wantErr: ErrFreezeTimeout, wantFrozen: false, wantFile: "0",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := newFakeKernel(t)
			l := fakeV1(t)
			file := "freezer.state"
			if tc.v2 {
				l, file = fakeV2(t), "cgroup.freeze"
			}
			g := mustCreate(t, l, "tenon/sb")
			d := g.dirs[Freezer]
			writeFiles(t, d, map[string]string{"freezer.state": "THAWED\n", "cgroup.events": "populated 1\nfrozen 0\n"})
			simulate(k, tc.step)
			timeout := tc.timeout
			if timeout == 0 {
				timeout = time.Second
			}
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				defer cancel()
				start := time.Now()
				err := g.Freeze(ctx)
				if tc.wantErr == nil && err != nil {
					t.Fatalf("Freeze: %v", err)
				}
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) || !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("Freeze = %v, want %v wrapping the deadline", err, tc.wantErr)
					}
					if el := time.Since(start); el < timeout {
						t.Errorf("Freeze gave up after %v, before the %v deadline", el, timeout)
					}
				}
			})
			if tc.wantWrites > 0 {
				n := 0
				for _, w := range k.writes {
					if strings.Contains(w, file+"=") {
						n++
					}
				}
				if n != tc.wantWrites {
					t.Errorf("%d writes to %s, want %d: %v", n, file, tc.wantWrites, k.writes)
				}
			}
			if got := readFile(t, filepath.Join(d, file)); got != tc.wantFile {
				t.Errorf("%s = %q after Freeze, want %q", file, got, tc.wantFile)
			}
			fr, err := g.Frozen()
			if err != nil || fr != tc.wantFrozen {
				t.Errorf("Frozen = %v, %v; want %v", fr, err, tc.wantFrozen)
			}
			tctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := g.Thaw(tctx); err != nil {
				t.Fatalf("Thaw: %v", err)
			}
			if fr, err := g.Frozen(); err != nil || fr {
				t.Errorf("Frozen after Thaw = %v, %v", fr, err)
			}
		})
	}
}

// TestThawStuck: a v1 group whose parent is frozen keeps reading FROZEN; Thaw
// must give up at the deadline instead of spinning, and a Freeze that cannot
// thaw back says so.
func TestThawStuck(t *testing.T) {
	k := newFakeKernel(t)
	g := mustCreate(t, fakeV1(t), "tenon/sb")
	writeFiles(t, g.dirs[Freezer], map[string]string{"freezer.state": "FROZEN\n"})
	simulate(k, func(_, _ string, _ int) (string, string) { return stateFreezing, "" })
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if err := g.Thaw(ctx); !errors.Is(err, ErrFreezeTimeout) {
			t.Errorf("Thaw = %v, want ErrFreezeTimeout", err)
		}
		err := g.Freeze(ctx)
		if !errors.Is(err, ErrFreezeTimeout) || !strings.Contains(err.Error(), "thawing back also failed") {
			t.Errorf("Freeze = %v, want a timeout that reports the failed thaw", err)
		}
	})
}
