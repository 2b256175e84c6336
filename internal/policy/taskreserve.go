package policy

import (
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

// TaskKey names an action by what it runs in which task: agents of one
// task (trajectory.TaskOf: rollouts or replicas of the same task) that run
// the same command in the same class run the same tool on the same tree.
type TaskKey struct {
	Task, Class, Command string
	N                    int // how many actions of the attempt ran it before
}

// taskKey is the key of action index of workflow wf; ok is false when
// the action names no command (a key by class alone would lump unrelated
// tools).
func taskKey(wf *trajectory.Workflow, index int) (TaskKey, bool) {
	if wf == nil || index < 0 || index >= len(wf.Actions) {
		return TaskKey{}, false
	}
	cmdOf := func(a *trajectory.Action) string {
		if a.Command != "" {
			return a.Command
		}
		return a.Run
	}
	act := &wf.Actions[index]
	k := TaskKey{Task: trajectory.TaskOf(*wf), Class: act.Class, Command: cmdOf(act)}
	if k.Command == "" {
		return TaskKey{}, false
	}
	for i := range index {
		if b := &wf.Actions[i]; b.Class == k.Class && cmdOf(b) == k.Command {
			k.N++
		}
	}
	return k, true
}

// TaskReserve holds, per TaskKey, what an action grew when it outgrew its
// prediction by more than a heavy action (admission's heavy threshold):
// the predictor's weakest case is a task's first heavy test, predicted
// like the light actions before it (predict.ClassFloor), admitted through
// the light lane, and grown under the gate and the OOM hold into the whole
// budget while every other action waits. Once one agent has run it, the
// same command of the same task in another agent reserves what it grew
// and waits in the heavy lane, as a predicted heavy action does. Only
// such gross under-predictions are learned: a few MiB more than predicted
// is the predictor's ordinary error, which the margin absorbs. The zero
// value is not usable: make one with make(TaskReserve).
type TaskReserve map[TaskKey]int64

// Learn records that an action of key k grew grown where predicted was
// predicted, if it outgrew it by more than heavy.
func (r TaskReserve) Learn(k TaskKey, grown, predicted, heavy int64) {
	if grown > predicted+heavy {
		r[k] = max(r[k], grown)
	}
}

// Apply raises d to what an earlier action of key k grew, as
// RetryReserve.Apply does.
func (r TaskReserve) Apply(k TaskKey, d predict.Descriptor) predict.Descriptor {
	if l, ok := r[k]; ok {
		return raiseTo(d, l)
	}
	return d
}

// learnTask records in the machine's TaskReserve that a's admitted action
// has grown grown so far (at a gate period, before it ends: a second
// agent's run of the same command may be ready while the first still
// grows) or in all (at its end), under the key ActionReady gave it.
func (m *Machine) learnTask(a *agentState, grown int64) {
	if a != nil && a.hasTask && m.adm != nil {
		m.taskLearned.Learn(a.task, grown, a.peak, m.adm.Config().HeavyThreshold)
	}
}
