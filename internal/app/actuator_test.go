package app

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/tenon-dev/tenon/internal/live"
)

type nopPacer struct{ name string }

func (nopPacer) Deny(string, float64) error { return nil }
func (nopPacer) Allow(string) error         { return nil }
func (nopPacer) Enabled() bool              { return true }
func (p nopPacer) Name() string             { return p.name }

func TestOpenActuator(t *testing.T) {
	errNoSchedExt := errors.New("no sched_ext")
	tests := []struct {
		name       string
		kind       string
		policies   []string
		loadErr    error
		cpuErr     error
		wantLoad   bool   // the scheduler is loaded
		wantPacing string // the pacer's name, "" for the freezer
		wantErr    bool
	}{
		{name: "freezer", kind: "freezer", policies: []string{"tenon"}},
		{name: "auto loads", kind: "auto", policies: []string{"eager", "tenon"}, wantLoad: true, wantPacing: "schedext"},
		{name: "empty is auto", kind: "", policies: []string{"tenon"}, wantLoad: true, wantPacing: "schedext"},
		// auto does not fall back to cpu (openActuator says why).
		{name: "auto falls back to the freezer", kind: "auto", policies: []string{"tenon"}, loadErr: errNoSchedExt, wantLoad: true},
		{name: "schedext loads", kind: "schedext", policies: []string{"tenon"}, wantLoad: true, wantPacing: "schedext"},
		{name: "schedext fails", kind: "schedext", policies: []string{"tenon"}, loadErr: errNoSchedExt, wantLoad: true, wantErr: true},
		{name: "no gate, nothing loaded", kind: "schedext", policies: []string{"eager"}},
		{name: "cpu", kind: "cpu", policies: []string{"gate"}, wantPacing: "cpu"},
		{name: "cpu without the controller", kind: "cpu", policies: []string{"tenon"}, cpuErr: errors.New("no cpu controller"), wantErr: true},
		{name: "cpu, no gate", kind: "cpu", policies: []string{"eager"}},
		{name: "unknown", kind: "quota", policies: []string{"tenon"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loaded, closed := false, false
			old := loadScheduler
			defer func() { loadScheduler = old }()
			oldCPU := newCPUPacer
			defer func() { newCPUPacer = oldCPU }()
			loadScheduler = func() (live.Pacer, func() error, error) {
				loaded = true
				if tt.loadErr != nil {
					return nil, nil, tt.loadErr
				}
				return nopPacer{"schedext"}, func() error { closed = true; return nil }, nil
			}
			newCPUPacer = func() (live.Pacer, error) {
				if tt.cpuErr != nil {
					return nil, tt.cpuErr
				}
				return nopPacer{"cpu"}, nil
			}
			pacing, closeFn, err := openActuator(tt.kind, tt.policies, slog.New(slog.DiscardHandler))
			got := ""
			if pacing != nil {
				got = pacing.Pacer.Name()
			}
			if (err != nil) != tt.wantErr || loaded != tt.wantLoad || got != tt.wantPacing {
				t.Fatalf("openActuator(%q, %q): pacing %q, loaded %v, err %v; want pacing %q, loaded %v, error %v",
					tt.kind, tt.policies, got, loaded, err, tt.wantPacing, tt.wantLoad, tt.wantErr)
			}
			if err != nil {
				return
			}
			closeFn()
			if closed != (tt.wantPacing == "schedext") { // only a loaded scheduler is unloaded
				t.Errorf("closed %v, want %v", closed, tt.wantPacing == "schedext")
			}
		})
	}
}
