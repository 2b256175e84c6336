package app

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/schedext"
)

// ActuatorNames lists the values of --actuator: how the gate holds back
// the sandboxes it denies.
const ActuatorNames = "auto, schedext, freezer"

// cgroupRoot is the cgroup v2 mount the sched_ext scheduler keys
// sandboxes under (schedext.Supported requires it to be v2).
const cgroupRoot = "/sys/fs/cgroup"

// loadScheduler loads the sched_ext gate scheduler; tests replace it.
var loadScheduler = func() (live.Pacer, func() error, error) {
	s, err := schedext.Load(schedext.Options{})
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}

// openActuator returns the live adapter's pacing for the gate's actuator
// kind ("" is auto), and what closes it at the end of the run:
//   - freezer: nil (denied sandboxes are frozen);
//   - schedext: the sched_ext scheduler paces them, or an error when it
//     cannot load;
//   - auto: schedext when the kernel has sched_ext and the scheduler
//     loads, else the freezer.
//
// No policy in policies has a gate: nothing is loaded (the scheduler would
// take every task of the host for nothing).
func openActuator(kind string, policies []string, log *slog.Logger) (*live.Pacing, func(), error) {
	none := func() {}
	switch kind {
	case "", "auto", "schedext", "freezer":
	default:
		return nil, nil, fmt.Errorf("actuator %q: want one of %s", kind, ActuatorNames)
	}
	if kind == "freezer" || !anyGate(policies) {
		return nil, none, nil
	}
	pacer, closeFn, err := loadScheduler()
	if err != nil {
		if kind == "schedext" {
			return nil, nil, fmt.Errorf("actuator schedext: %w", err)
		}
		log.Info("gate actuator: the freezer", "why", err)
		return nil, none, nil
	}
	log.Info("gate actuator: sched_ext pacing", "rate", live.DefaultPaceRate, "handover", live.DefaultHandover)
	pacing := &live.Pacing{Pacer: pacer, CgroupID: func(p string) (uint64, error) {
		return schedext.CgroupID(filepath.Join(cgroupRoot, p))
	}}
	return pacing, func() {
		if err := closeFn(); err != nil {
			log.Warn("unloading the sched_ext scheduler", "err", err)
		}
	}, nil
}

// anyGate reports whether a policy named in names runs the gate (names
// that do not parse have none; building the policy reports them).
func anyGate(names []string) bool {
	for _, n := range names {
		if sp, err := policy.ParseSpec(n); err == nil && sp.Gate {
			return true
		}
	}
	return false
}
