package policy

import (
	"fmt"
	"testing"

	"github.com/tenon-dev/tenon/internal/gate"
)

// BenchmarkSampleAdmitted measures one gate period of the decision core
// (Sample: the gate's step with every sandbox's demand capped by its
// admitted action) with n sandboxes, each running an admitted action. The
// cost must grow about linearly with n: until the admitted actions were
// indexed once per call, each sandbox scanned all of them.
func BenchmarkSampleAdmitted(b *testing.B) {
	for _, n := range []int{100, 1000, 4000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m, err := NewMachine(Config{Spec: Spec{Name: "bench", Admission: true, Gate: true}, Budget: 1 << 40,
				Model: constPred{peak: 1 << 20}})
			if err != nil {
				b.Fatal(err)
			}
			obs := &fakeObs{avail: 1 << 40, mem: map[string]int64{}}
			smp := make([]gate.Sample, n)
			for i := range n {
				id := fmt.Sprint("agent-", i)
				wf := wfPeak(id, 1)
				if _, err := m.Submit(at(0), id, 1, wf, obs); err != nil {
					b.Fatal(err)
				}
				if _, _, err := m.ActionReady(at(0), id, 0, &wf.Actions[0], id); err != nil {
					b.Fatal(err)
				}
				if got := len(m.Schedule(at(0), obs)); got != 1 {
					b.Fatalf("agent %d: admitted %d", i, got)
				}
				obs.mem[id] = 8 << 20
				smp[i] = gate.Sample{ID: id, Footprint: 8 << 20}
			}
			ms := 100
			for b.Loop() {
				m.Sample(at(ms), Observation{Available: 1 << 40, Sandboxes: smp})
				ms += 100
			}
		})
	}
}
