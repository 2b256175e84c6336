package predict

import (
	"strings"
	"testing"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

func TestClassPrior(t *testing.T) {
	p := ClassPrior{
		Peak:           map[string]int64{"bash": 8 * mib, "test": 600 * mib, "install": 50 * mib},
		Default:        40 * mib,
		HeavyThreshold: 500 * mib,
		Reclass: func(cmd string) string {
			if strings.Contains(cmd, "pytest") {
				return "test"
			}
			return "bash"
		},
	}
	tests := []struct {
		name, class, cmd string
		bg               bool
		peak             int64
		heavy            float64
	}{
		{name: "own class", class: "install", cmd: "pip install x", peak: 50 * mib},
		{name: "bash reclassed", class: "bash", cmd: "cd /w && pytest -x", peak: 600 * mib, heavy: 1},
		{name: "bash kept", class: "bash", cmd: "ls", peak: 8 * mib},
		{name: "alias", class: "shell", cmd: "pytest", peak: 600 * mib, heavy: 1},
		{name: "missing class", class: "read", cmd: "/etc/hosts", peak: 40 * mib},
		{name: "test not reclassed", class: "test", cmd: "ls", peak: 600 * mib, heavy: 1},
		{name: "background", class: "bash", cmd: "ls", bg: true, peak: 8 * mib},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := p.Predict(ContextFor("w", trajectory.Action{Class: tc.class, Command: tc.cmd,
				Hints: trajectory.Hints{Background: tc.bg}}, nil, 0))
			if d.PredPeak != tc.peak || d.PredAvg != tc.peak || d.HeavyRisk != tc.heavy {
				t.Errorf("got peak %d avg %d heavy %v, want %d and %v", d.PredPeak, d.PredAvg, d.HeavyRisk, tc.peak, tc.heavy)
			}
			if want := PriorityForeground; tc.bg && d.Priority == want || !tc.bg && d.Priority != want {
				t.Errorf("priority %d with background=%v", d.Priority, tc.bg)
			}
		})
	}
}
