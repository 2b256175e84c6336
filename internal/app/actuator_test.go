package app

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/tenon-dev/tenon/internal/live"
)

type nopPacer struct{}

func (nopPacer) Deny(uint64, float64) error { return nil }
func (nopPacer) Allow(uint64) error         { return nil }
func (nopPacer) Enabled() bool              { return true }

func TestOpenActuator(t *testing.T) {
	errNoSchedExt := errors.New("no sched_ext")
	tests := []struct {
		name       string
		kind       string
		policies   []string
		loadErr    error
		wantLoad   bool // the scheduler is loaded
		wantPacing bool
		wantErr    bool
	}{
		{name: "freezer", kind: "freezer", policies: []string{"tenon"}},
		{name: "auto loads", kind: "auto", policies: []string{"eager", "tenon"}, wantLoad: true, wantPacing: true},
		{name: "empty is auto", kind: "", policies: []string{"tenon"}, wantLoad: true, wantPacing: true},
		{name: "auto falls back", kind: "auto", policies: []string{"tenon"}, loadErr: errNoSchedExt, wantLoad: true},
		{name: "schedext loads", kind: "schedext", policies: []string{"tenon"}, wantLoad: true, wantPacing: true},
		{name: "schedext fails", kind: "schedext", policies: []string{"tenon"}, loadErr: errNoSchedExt, wantLoad: true, wantErr: true},
		{name: "no gate, nothing loaded", kind: "schedext", policies: []string{"eager"}},
		{name: "unknown", kind: "cpu", policies: []string{"tenon"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loaded, closed := false, false
			old := loadScheduler
			defer func() { loadScheduler = old }()
			loadScheduler = func() (live.Pacer, func() error, error) {
				loaded = true
				if tt.loadErr != nil {
					return nil, nil, tt.loadErr
				}
				return nopPacer{}, func() error { closed = true; return nil }, nil
			}
			pacing, closeFn, err := openActuator(tt.kind, tt.policies, slog.New(slog.DiscardHandler))
			if (err != nil) != tt.wantErr || loaded != tt.wantLoad || (pacing != nil) != tt.wantPacing {
				t.Fatalf("openActuator(%q, %q): pacing %v, loaded %v, err %v; want pacing %v, loaded %v, error %v",
					tt.kind, tt.policies, pacing != nil, loaded, err, tt.wantPacing, tt.wantLoad, tt.wantErr)
			}
			if err != nil {
				return
			}
			if pacing != nil {
				if id, err := pacing.CgroupID("no/such/cgroup"); err == nil {
					t.Errorf("CgroupID of a missing cgroup: %d, no error", id)
				}
			}
			closeFn()
			if closed != tt.wantPacing {
				t.Errorf("closed %v, want %v", closed, tt.wantPacing)
			}
		})
	}
}
