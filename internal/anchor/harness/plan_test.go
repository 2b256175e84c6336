package harness

import (
	"slices"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/memtool"
	"github.com/tenon-dev/tenon/internal/trajectory"
)

func TestPlan(t *testing.T) {
	mem := &trajectory.MemProfile{PeakMiB: 64, RampS: 2, HoldS: 6, Background: true, RetainMiB: 8}
	wf := trajectory.Workflow{ID: "w", Actions: []trajectory.Action{
		{Wait: 10, Class: "test", Mem: mem},
		{Wait: 0.5, Class: "bash", Run: "echo hi"},
		{Wait: 1, Class: "read"},
	}}
	tests := []struct {
		name      string
		o         PlanOptions
		wantWaits []time.Duration
		wantMem   trajectory.MemProfile
	}{
		{"as recorded", PlanOptions{Exe: "/t"}, []time.Duration{10 * time.Second, 500 * time.Millisecond, time.Second},
			trajectory.MemProfile{PeakMiB: 64, RampS: 2, HoldS: 6, RetainMiB: 8}},
		{"capped and scaled", PlanOptions{Exe: "/t", WaitScale: 0.5, MaxWait: 4 * time.Second, MaxTool: 4 * time.Second},
			[]time.Duration{4 * time.Second, 250 * time.Millisecond, 500 * time.Millisecond},
			trajectory.MemProfile{PeakMiB: 64, RampS: 1, HoldS: 3, RetainMiB: 8}},
		{"first actions only", PlanOptions{Exe: "/t", MaxActions: 1}, []time.Duration{10 * time.Second},
			trajectory.MemProfile{PeakMiB: 64, RampS: 2, HoldS: 6, RetainMiB: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := Plan(wf, tt.o)
			var waits []time.Duration
			for _, s := range steps {
				waits = append(waits, s.Wait)
			}
			if !slices.Equal(waits, tt.wantWaits) {
				t.Fatalf("waits %v, want %v", waits, tt.wantWaits)
			}
			if want := append([]string{"/t"}, memtool.Args(tt.wantMem)...); !slices.Equal(steps[0].Argv, want) {
				t.Fatalf("mem argv %q, want %q", steps[0].Argv, want)
			}
			if len(steps) > 1 && !slices.Equal(steps[1].Argv, []string{"/bin/sh", "-c", "echo hi"}) {
				t.Fatalf("run argv %q", steps[1].Argv)
			}
			if len(steps) > 2 && !slices.Equal(steps[2].Argv, []string{"true"}) {
				t.Fatalf("empty action argv %q", steps[2].Argv)
			}
		})
	}
	if !mem.Background {
		t.Fatal("Plan modified the workflow's profile")
	}
}

func TestParseHeapLine(t *testing.T) {
	tests := []struct {
		name string
		line string
		want heapEvent
	}{
		{"ready", "heap ready mib=300 chunks=300 sum=00000000000000ff", heapEvent{"ready", 255}},
		{"ok", "heap verify ok step=12 sum=0123456789abcdef", heapEvent{"ok", 0x0123456789abcdef}},
		{"failed", "heap verify FAILED step=3: chunk 1 ...", heapEvent{Kind: "failed"}},
		{"ok without sum", "heap verify ok step=3", heapEvent{}},
		{"other", "something else", heapEvent{}},
		{"empty", "", heapEvent{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseHeapLine(tt.line); got != tt.want {
				t.Fatalf("parseHeapLine(%q) = %+v, want %+v", tt.line, got, tt.want)
			}
		})
	}
	if evs := heapEvents("x\nheap ready mib=1 chunks=1 sum=1\nheap verify ok step=1 sum=2\n"); len(evs) != 2 || evs[1].Sum != 2 {
		t.Fatalf("heapEvents = %+v", evs)
	}
}
