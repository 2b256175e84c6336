package trajectory

import (
	"slices"
	"testing"
)

func TestReplicate(t *testing.T) {
	in := []Workflow{
		{Version: Version, ID: "a", Arrival: 7, Image: "swe/a", Kind: "imported", Actions: []Action{mem(100, 4, 0, false)}},
		{Version: Version, ID: "b", Arrival: 9, Image: "swe/b", Actions: []Action{{Class: "bash", Run: "true", Recorded: &Recorded{DurationS: 2, PeakMiB: 5}}}},
		{Version: Version, ID: "c", Actions: []Action{mem(50, 2, 0, false), mem(60, 2, 0, false)}},
	}
	tests := []struct {
		name            string
		copies          int
		spacing, offset float64
		wantIDs         []string
		wantArrivals    []float64
	}{
		{"one copy renames and respaces", 1, 0.5, 30, []string{"a-r0", "b-r0", "c-r0"}, []float64{0, 0.5, 1}},
		{"two copies, the second offset", 2, 0.5, 30, []string{"a-r0", "b-r0", "c-r0", "a-r1", "b-r1", "c-r1"}, []float64{0, 0.5, 1, 30, 30.5, 31}},
		{"no spacing, no offset: one burst", 2, 0, 0, []string{"a-r0", "b-r0", "c-r0", "a-r1", "b-r1", "c-r1"}, []float64{0, 0, 0, 0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Replicate(in, tt.copies, tt.spacing, tt.offset)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			var arr []float64
			for i, w := range out {
				ids, arr = append(ids, w.ID), append(arr, w.Arrival)
				if w.Image != "" {
					t.Errorf("%s: image %q, want dropped", w.ID, w.Image)
				}
				src := in[i%len(in)]
				if w.Kind != src.Kind || len(w.Actions) != len(src.Actions) || w.PeakMiB() != src.PeakMiB() || w.LengthS() != src.LengthS() {
					t.Errorf("%s differs from %s beyond id, arrival and image", w.ID, src.ID)
				}
				if err := w.Validate(); err != nil {
					t.Errorf("%s: %v", w.ID, err)
				}
			}
			if !slices.Equal(ids, tt.wantIDs) || !slices.Equal(arr, tt.wantArrivals) {
				t.Errorf("ids %v arrivals %v; want %v %v", ids, arr, tt.wantIDs, tt.wantArrivals)
			}
		})
	}
}

// TestReplicateCopiesDeep: changing a copy's profile leaves the input and
// the other copies alone.
func TestReplicateCopiesDeep(t *testing.T) {
	in := []Workflow{{Version: Version, ID: "a", Image: "swe/a", Actions: []Action{{Class: "x", Mem: &MemProfile{PeakMiB: 10, HoldS: 1}, Recorded: &Recorded{PeakMiB: 10}}}}}
	out, err := Replicate(in, 2, 0.5, 30)
	if err != nil {
		t.Fatal(err)
	}
	out[0].Actions[0].Mem.PeakMiB = 99
	out[0].Actions[0].Recorded.PeakMiB = 99
	if in[0].Actions[0].Mem.PeakMiB != 10 || in[0].Actions[0].Recorded.PeakMiB != 10 || out[1].Actions[0].Mem.PeakMiB != 10 || out[1].Actions[0].Recorded.PeakMiB != 10 {
		t.Error("copies share memory profiles")
	}
	if in[0].ID != "a" || in[0].Image != "swe/a" {
		t.Errorf("input changed: %+v", in[0])
	}
}

func TestReplicateErrors(t *testing.T) {
	tests := []struct {
		name            string
		copies          int
		spacing, offset float64
	}{
		{"no copy", 0, 0.5, 30},
		{"negative spacing", 2, -1, 30},
		{"negative offset", 2, 0.5, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Replicate([]Workflow{{ID: "a"}}, tt.copies, tt.spacing, tt.offset); err == nil {
				t.Error("no error")
			}
		})
	}
}

func TestShuffled(t *testing.T) {
	var in []Workflow
	for i := range 20 {
		in = append(in, Workflow{ID: string(rune('a' + i))})
	}
	ids := func(ws []Workflow) (s []string) {
		for _, w := range ws {
			s = append(s, w.ID)
		}
		return s
	}
	if got := ids(Shuffled(in, 0)); !slices.Equal(got, ids(in)) {
		t.Errorf("seed 0 reordered: %v", got)
	}
	one, again, two := ids(Shuffled(in, 1)), ids(Shuffled(in, 1)), ids(Shuffled(in, 2))
	if !slices.Equal(one, again) {
		t.Errorf("seed 1 gave %v then %v", one, again)
	}
	if slices.Equal(one, ids(in)) || slices.Equal(one, two) {
		t.Errorf("seeds 1 and 2 should give other orders: %v, %v", one, two)
	}
	sorted := slices.Clone(one)
	slices.Sort(sorted)
	if !slices.Equal(sorted, ids(in)) {
		t.Errorf("not a permutation: %v", one)
	}
	if in[0].ID != "a" {
		t.Error("Shuffled changed its input")
	}
}

func TestReplicateKeepsTasks(t *testing.T) {
	in := []Workflow{
		{Version: Version, ID: "a", Actions: []Action{mem(10, 1, 0, false)}},
		{Version: Version, ID: "b", Task: "t", Actions: []Action{mem(10, 1, 0, false)}},
	}
	out, err := Replicate(in, 2, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Replicate(out[:1], 2, 1, 10) // a copy of a copy keeps the first task
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, w := range append(out, again...) {
		got = append(got, w.ID+":"+TaskOf(w))
	}
	want := []string{"a-r0:a", "b-r0:t", "a-r1:a", "b-r1:t", "a-r0-r0:a", "a-r0-r1:a"}
	if !slices.Equal(got, want) {
		t.Fatalf("id:task = %v, want %v", got, want)
	}
	if ts := Tasks(out); !slices.Equal(ts, []string{"a", "t"}) {
		t.Fatalf("Tasks = %v, want [a t]", ts)
	}
}
