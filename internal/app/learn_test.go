package app

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// swapper records the predictors a learner swaps in.
type swapper struct {
	mu  sync.Mutex
	got []predict.Predictor
}

func (s *swapper) swap(p predict.Predictor) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, p)
	return nil
}

func measured(wf string, i int, cmd string, peakMiB int64) predict.ActionRecord {
	return predict.ActionRecord{Event: predict.EventActionDone, WorkflowID: wf, Index: i, Class: "bash", Command: cmd,
		PeakBytes: peakMiB * units.MiB, AvgBytes: peakMiB * units.MiB / 2, DurationS: 1, StartS: float64(2 * i), EndS: float64(2*i + 1)}
}

func predictPeak(p predict.Predictor, class, cmd string) int64 {
	return p.Predict(predict.ContextFor("w", trajectory.Action{Class: class, Command: cmd}, nil, 0)).PredPeak
}

// TestLearnerOnline: with no measurements the predictor is the
// calibration's class priors (a "bash" pytest gets the test prior); every
// K measurements a model is trained in the background, saved as the next
// version and swapped in; a restart loads the saved version.
func TestLearnerOnline(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	l, p, err := openLearner(dir, "", units.GiB/8, 3, log)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.(predict.ClassFloor).P.(predict.ClassPrior); !ok {
		t.Fatalf("start predictor %T, want the class priors", p.(predict.ClassFloor).P)
	}
	if got, want := predictPeak(p, "bash", "cd /w && python -m pytest -x"), l.priors["test"]; got != want || want <= l.priors["bash"] {
		t.Errorf("bash pytest predicted %d, want the test prior %d (bash prior %d)", got, want, l.priors["bash"])
	}
	if !strings.Contains(logs.String(), "class priors") {
		t.Errorf("start not logged: %s", logs.String())
	}
	var s swapper
	l.swap = s.swap
	l.Record(measured("w1", 0, "ls", 2))
	l.Record(measured("w1", 1, "pytest", 400))
	l.wg.Wait()
	if len(s.got) != 0 {
		t.Fatalf("retrained after 2 of K=3 measurements")
	}
	l.Record(measured("w2", 0, "pytest", 420))
	l.wg.Wait()
	if len(s.got) != 1 || l.Version() != 1 {
		t.Fatalf("after K measurements: %d swaps, version %d; want 1 and 1", len(s.got), l.Version())
	}
	if _, ok := s.got[0].(predict.ClassFloor).P.(*predict.Model); !ok {
		t.Errorf("swapped in %T, want a trained model under the class floor", s.got[0].(predict.ClassFloor).P)
	}
	if _, err := os.Stat(modelPath(dir, 1)); err != nil {
		t.Errorf("model version 1 not saved: %v", err)
	}
	for i := range 3 {
		l.Record(measured("w3", i, "make", 50))
	}
	l.wg.Wait()
	if l.Version() != 2 || len(s.got) != 2 {
		t.Errorf("after 2K measurements: version %d, %d swaps; want 2", l.Version(), len(s.got))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	logs.Reset()
	l2, p2, err := openLearner(dir, "", units.GiB/8, 3, log)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if _, ok := p2.(predict.ClassFloor).P.(*predict.Model); !ok || l2.Version() != 2 {
		t.Errorf("restart: %T at version %d, want the saved model, version 2", p2.(predict.ClassFloor).P, l2.Version())
	}
	if !strings.Contains(logs.String(), "saved model loaded") {
		t.Errorf("restart not logged: %s", logs.String())
	}
}

// TestLearnerModelFile: a model given with --model is the start predictor
// and is not retrained; measurements are still kept.
func TestLearnerModelFile(t *testing.T) {
	ex := predict.ExamplesFromRecords([]predict.ActionRecord{measured("w", 0, "ls", 2), measured("w", 1, "pytest", 300)})
	m, err := predict.Train(ex, predict.TrainConfig{Trees: 2, MinLeaf: 1})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "m.json")
	if err := m.Save(file); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l, p, err := openLearner(dir, file, units.GiB/8, 1, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.(predict.ClassFloor).P.(*predict.Model); !ok {
		t.Fatalf("start predictor %T, want the model file", p.(predict.ClassFloor).P)
	}
	var s swapper
	l.swap = s.swap
	l.Record(measured("w", 0, "ls", 2))
	l.wg.Wait()
	if len(s.got) != 0 {
		t.Error("a given model was retrained")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := openLearner(t.TempDir(), filepath.Join(dir, "missing.json"), units.GiB/8, 1, slog.New(slog.DiscardHandler)); err == nil {
		t.Error("a missing model file was accepted")
	}
}

// Version is the model version in use (0: the priors).
func (l *learner) Version() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.version
}
