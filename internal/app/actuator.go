package app

import (
	"fmt"
	"log/slog"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/live"
	"github.com/tenon-dev/tenon/internal/policy"
	"github.com/tenon-dev/tenon/internal/schedext"
)

// ActuatorNames lists the values of --actuator: how the gate holds back
// the sandboxes it denies.
const ActuatorNames = "auto, schedext, cpu, freezer"

// cgroupRoot is the cgroup v2 mount the sched_ext scheduler keys
// sandboxes under (schedext.Supported requires it to be v2).
const cgroupRoot = "/sys/fs/cgroup"

// loadScheduler loads the sched_ext gate scheduler as a pacer; tests
// replace it.
var loadScheduler = func() (live.Pacer, func() error, error) {
	s, err := schedext.Load(schedext.Options{})
	if err != nil {
		return nil, nil, err
	}
	return schedext.NewCgroupPacer(s, cgroupRoot), s.Close, nil
}

// newCPUPacer paces through the cgroups' CPU limit on this host's layout;
// tests replace it.
var newCPUPacer = func() (live.Pacer, error) {
	layout, err := cgroup.Detect("/proc")
	if err != nil {
		return nil, err
	}
	return live.NewCPUPacer(layout)
}

// openActuator returns the live adapter's pacing for the gate's actuator
// kind ("" is auto), and what closes it at the end of the run:
//   - freezer: nil (denied sandboxes are frozen);
//   - schedext: the sched_ext scheduler paces them, or an error when it
//     cannot load;
//   - cpu: their cgroup's CPU limit (cpu.max, v1 cpu.cfs_quota_us) paces
//     them, or an error when there is no cpu controller;
//   - auto: schedext when the kernel has sched_ext and the scheduler
//     loads, else the freezer.
//
// auto does not fall back to cpu: every result of the bench on hosts
// without sched_ext was measured with the freezer, and the CPU limit
// paces coarsely (a burst of quota per 100 ms period, then a stop,
// throttling tasks wherever the quota runs out), where the freezer stops
// growth at once; cpu is there to choose, for kernels without sched_ext,
// until a bench run shows it does as well on the headline case.
//
// No policy in policies has a gate: nothing is loaded (the scheduler would
// take every task of the host for nothing).
func openActuator(kind string, policies []string, log *slog.Logger) (*live.Pacing, func(), error) {
	none := func() {}
	switch kind {
	case "", "auto", "schedext", "cpu", "freezer":
	default:
		return nil, nil, fmt.Errorf("actuator %q: want one of %s", kind, ActuatorNames)
	}
	if kind == "freezer" || !anyGate(policies) {
		return nil, none, nil
	}
	if kind == "cpu" {
		pacer, err := newCPUPacer()
		if err != nil {
			return nil, nil, fmt.Errorf("actuator cpu: %w", err)
		}
		log.Info("gate actuator: cpu quota pacing", "rate", live.DefaultPaceRate, "handover", live.DefaultHandover)
		return &live.Pacing{Pacer: pacer}, none, nil
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
	return &live.Pacing{Pacer: pacer}, func() {
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
