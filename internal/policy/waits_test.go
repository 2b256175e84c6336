package policy

import (
	"testing"
	"time"
)

func TestWaitModel(t *testing.T) {
	w := NewWaitModel()
	if d := w.Predict("a"); d != 0 {
		t.Fatalf("nothing seen: %v, want 0 (unknown)", d)
	}
	w.Observe("a", 10*time.Second)
	w.Observe("a", 0) // ignored
	if d := w.Predict("a"); d != 10*time.Second {
		t.Errorf("one wait of 10 s: %v", d)
	}
	if d := w.Predict("b"); d != 10*time.Second {
		t.Errorf("an agent not seen waiting gets the average over all: %v", d)
	}
	w.Observe("a", 20*time.Second) // 0.3×20 + 0.7×10
	if d := w.Predict("a"); d != 13*time.Second {
		t.Errorf("after 10 s and 20 s: %v, want 13s", d)
	}
	w.Observe("b", 2*time.Second)
	if d := w.Predict("b"); d != 2*time.Second {
		t.Errorf("b's own: %v", d)
	}
	if all, ok := w.All(); !ok || all != time.Duration(0.3*2e9+0.7*13e9) {
		t.Errorf("over all: %v %v", all, ok)
	}
	w.Forget("b")
	if _, ok := w.Average("b"); ok {
		t.Errorf("b forgotten but has an average")
	}
	w.Set("c", false, 5*time.Second)
	w.Set("x", true, 7*time.Second)
	if w.Predict("c") != 5*time.Second || w.Predict("d") != 7*time.Second {
		t.Errorf("set: c %v, unknown d %v", w.Predict("c"), w.Predict("d"))
	}
}
