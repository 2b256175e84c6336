package predict

import (
	"fmt"
	"math/rand/v2"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

// synthWorkflows makes workflows whose memory depends on the command (pytest
// and pip are heavy-ish, builds grow with the workflow's "size") and on the
// workflow itself (a per-workflow scale that history can learn); the
// sandbox's level before an action grows by 2 MiB an action from 150 MiB.
func synthWorkflows(n int, seed uint64) []trajectory.Workflow {
	rng := rand.New(rand.NewPCG(seed, 2))
	cmds := []struct {
		class, cmd string
		base       float64
	}{
		{"read", "/testbed/src/pkg/mod.py", 1},
		{"search", "def foo /testbed/src", 3},
		{"edit", "/testbed/src/pkg/mod.py", 1},
		{"bash", "git diff", 5},
		{"run", "python reproduce.py", 60},
		{"test", "cd /testbed && python -m pytest tests/test_mod.py -x -q", 300},
		{"install", "pip install -e .", 500},
		{"build", "make -j2", 900},
	}
	var wfs []trajectory.Workflow
	for w := range n {
		scale := 0.5 + 2*rng.Float64()
		wf := trajectory.Workflow{Version: 1, ID: fmt.Sprintf("wf-%03d", w)}
		for range 5 + rng.IntN(20) {
			c := cmds[rng.IntN(len(cmds))]
			peak := c.base * scale * (0.8 + 0.4*rng.Float64())
			wf.Actions = append(wf.Actions, trajectory.Action{
				Wait: 1 + 5*rng.Float64(), Class: c.class, Command: c.cmd,
				Recorded: &trajectory.Recorded{DurationS: 0.5 + rng.Float64()*10, AvgMiB: peak * 0.6, PeakMiB: peak,
					BeforeMiB: 150 + 2*float64(len(wf.Actions))},
			})
		}
		wfs = append(wfs, wf)
	}
	return wfs
}
