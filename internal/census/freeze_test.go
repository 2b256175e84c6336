package census

import (
	"context"
	"errors"
	"testing"
	"time"
)

type fakeFreezer struct {
	freezeErr, thawErr error
	frozen             bool
	reportNotFrozen    bool
	thawCtxErr         error // ctx.Err() seen by Thaw
	log                *[]string
	name               string
}

func (f *fakeFreezer) Freeze(ctx context.Context) error {
	*f.log = append(*f.log, "freeze "+f.name)
	if f.freezeErr != nil {
		return f.freezeErr
	}
	f.frozen = true
	return nil
}

func (f *fakeFreezer) Thaw(ctx context.Context) error {
	*f.log = append(*f.log, "thaw "+f.name)
	f.thawCtxErr = ctx.Err()
	f.frozen = false
	return f.thawErr
}

func (f *fakeFreezer) Frozen() (bool, error) { return f.frozen && !f.reportNotFrozen, nil }

func TestFreezeAll(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name     string
		setup    func(a, b *fakeFreezer)
		wantErr  error
		wantLog  []string
		thawFail bool
		leftA    bool // a is frozen after the thaw (it was before)
	}{
		{
			name:    "freezes all, thaws in reverse",
			setup:   func(a, b *fakeFreezer) {},
			wantLog: []string{"freeze a", "freeze b", "thaw b", "thaw a"},
		},
		{
			name:    "failure thaws the partially frozen swarm",
			setup:   func(a, b *fakeFreezer) { b.freezeErr = boom },
			wantErr: ErrFreeze,
			wantLog: []string{"freeze a", "freeze b", "thaw b", "thaw a"},
		},
		{
			name:    "verified: a group that is not frozen is an error",
			setup:   func(a, b *fakeFreezer) { a.reportNotFrozen = true },
			wantErr: ErrFreeze,
			wantLog: []string{"freeze a", "thaw a"},
		},
		{
			name:    "a group frozen before (another process's hold) is neither frozen again nor thawed",
			setup:   func(a, b *fakeFreezer) { a.frozen = true },
			wantLog: []string{"freeze b", "thaw b"},
			leftA:   true,
		},
		{
			name:     "thaw errors are reported after thawing the rest",
			setup:    func(a, b *fakeFreezer) { b.thawErr = boom },
			wantLog:  []string{"freeze a", "freeze b", "thaw b", "thaw a"},
			thawFail: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log []string
			a, b := &fakeFreezer{name: "a", log: &log}, &fakeFreezer{name: "b", log: &log}
			tt.setup(a, b)
			ctx, cancel := context.WithCancel(context.Background())
			thaw, err := freezeAll(ctx, []Freezer{a, b}, time.Second)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			cancel() // an interrupted caller must still thaw
			terr := thaw()
			if (terr != nil) != tt.thawFail {
				t.Errorf("thaw err = %v, want failure %v", terr, tt.thawFail)
			}
			if len(log) != len(tt.wantLog) {
				t.Fatalf("log = %v, want %v", log, tt.wantLog)
			}
			for i := range log {
				if log[i] != tt.wantLog[i] {
					t.Fatalf("log = %v, want %v", log, tt.wantLog)
				}
			}
			if a.thawCtxErr != nil {
				t.Errorf("thaw ran with a cancelled context: %v", a.thawCtxErr)
			}
			if a.frozen != tt.leftA || b.frozen {
				t.Errorf("after the thaw a frozen %v (want %v), b frozen %v (want false)", a.frozen, tt.leftA, b.frozen)
			}
		})
	}
}
