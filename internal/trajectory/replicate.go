package trajectory

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Replication defaults: the imported trace sets are a few dozen runs that
// all arrive at 0, too few to load a budget for long. Each copy of the set
// arrives ReplicaOffsetS after the previous one, and within a copy the
// workflows arrive ReplicaSpacingS apart, so the copies overlap the tail of
// the previous one instead of starting as a single burst.
const (
	ReplicaSpacingS = 0.5
	ReplicaOffsetS  = 30
)

// Replicate makes copies of the workflow set wfs for measurement: copy rep
// (from 0) of workflow i (its index in wfs) gets the id "<id>-r<rep>" and
// arrives at i×spacingS + rep×offsetS; the original arrivals are dropped.
// Copies come out in rep order, each in the order of wfs.
//
// Every copy drops the image: a replicated set runs in the backend's
// default image ("" is the process backend's host root), because recorded
// traces name the images they were recorded in (per-task SWE images) and
// their actions are memory profiles that run anywhere.
//
// The copies share nothing with wfs: actions and their profiles are
// copied, so scaling one copy leaves the others alone.
func Replicate(wfs []Workflow, copies int, spacingS, offsetS float64) ([]Workflow, error) {
	if copies < 1 {
		return nil, fmt.Errorf("replicating: copies must be at least 1, got %d", copies)
	}
	if !(spacingS >= 0) || !(offsetS >= 0) {
		return nil, fmt.Errorf("replicating: spacing %g s and offset %g s must not be negative", spacingS, offsetS)
	}
	out := make([]Workflow, 0, copies*len(wfs))
	for rep := range copies {
		for i, w := range wfs {
			w.Task = TaskOf(w)
			w.ID = fmt.Sprintf("%s-r%d", w.ID, rep)
			w.Arrival = float64(i)*spacingS + float64(rep)*offsetS
			w.Image = ""
			w.Actions = slices.Clone(w.Actions)
			for j := range w.Actions {
				a := &w.Actions[j]
				if a.Mem != nil {
					m := *a.Mem
					a.Mem = &m
				}
				if a.Recorded != nil {
					r := *a.Recorded
					a.Recorded = &r
				}
			}
			out = append(out, w)
		}
	}
	return out, nil
}

// Shuffled returns the workflows of wfs in an order drawn from seed, for
// measuring how a result depends on the order in which agents arrive
// (Replicate gives arrivals by position); seed 0 keeps the order. The
// workflows themselves are shared with wfs, not copied.
func Shuffled(wfs []Workflow, seed uint64) []Workflow {
	out := slices.Clone(wfs)
	if seed == 0 {
		return out
	}
	r := rand.New(rand.NewPCG(seed, 0x7e404))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
