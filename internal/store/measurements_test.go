package store

import (
	"testing"

	"github.com/tenon-dev/tenon/internal/predict"
)

// TestMeasurements appends measured actions, reads the latest ones oldest
// first and finds them again after a reopen.
func TestMeasurements(t *testing.T) {
	s, p := openTest(t)
	for i := range 5 {
		n, err := s.AddMeasurement(predict.ActionRecord{Event: predict.EventActionDone, WorkflowID: "w", Index: i, PeakBytes: int64(i) << 20})
		if err != nil {
			t.Fatal(err)
		}
		if n != i+1 {
			t.Errorf("after %d adds the store holds %d", i+1, n)
		}
	}
	got, err := s.Measurements(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Index != 2 || got[2].Index != 4 || got[2].PeakBytes != 4<<20 {
		t.Errorf("latest 3 = %+v, want actions 2, 3, 4", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	all, err := s2.Measurements(0)
	if err != nil || len(all) != 5 || all[0].Index != 0 {
		t.Errorf("after reopen: %d measurements (%v), want 5 from action 0", len(all), err)
	}
}
