package predict

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// nonlinear is y = sin(x0)·x1 + 2·[x2 > 0.5]; x3..x5 are noise features.
func nonlinear(n int, seed uint64) (X [][]float64, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	for range n {
		x := []float64{rng.Float64() * 2 * math.Pi, rng.Float64() * 2, rng.Float64(),
			rng.Float64(), rng.Float64(), rng.Float64()}
		v := math.Sin(x[0]) * x[1]
		if x[2] > 0.5 {
			v += 2
		}
		X = append(X, x)
		y = append(y, v)
	}
	return X, y
}

func TestForestFitsNonlinearFunction(t *testing.T) {
	X, y := nonlinear(4000, 1)
	Xt, yt := nonlinear(1000, 2)
	f := FitForest(X, y, nil, ForestConfig{Trees: 40, MaxDepth: 14, MinLeaf: 2, FeatureFraction: 0.6, MaxBins: 128, Seed: 7})
	var absErr, mean, ssTot, ssRes float64
	for _, v := range yt {
		mean += v / float64(len(yt))
	}
	for i, x := range Xt {
		p := f.Predict(x)
		absErr += math.Abs(p-yt[i]) / float64(len(yt))
		ssRes += (p - yt[i]) * (p - yt[i])
		ssTot += (yt[i] - mean) * (yt[i] - mean)
	}
	r2 := 1 - ssRes/ssTot
	t.Logf("held-out MAE %.3f, R² %.3f (target std %.2f)", absErr, r2, math.Sqrt(ssTot/float64(len(yt))))
	// The step alone is worth 2 and the sine term spans ±2: a model that
	// missed either would have MAE near 0.5 or more.
	if absErr > 0.1 || r2 < 0.98 {
		t.Errorf("forest fit: MAE %.3f (want <= 0.1), R² %.3f (want >= 0.98)", absErr, r2)
	}
}

func TestForestIgnoresDisallowedFeatures(t *testing.T) {
	X, y := nonlinear(500, 3)
	f := FitForest(X, y, []int{3, 4, 5}, ForestConfig{Trees: 5, MaxDepth: 6, MinLeaf: 2, FeatureFraction: 1, Seed: 1})
	for _, tr := range f.Trees {
		for _, feat := range tr.Feature {
			if feat >= 0 && feat < 3 {
				t.Fatalf("tree splits on disallowed feature %d", feat)
			}
		}
	}
}

func TestTrainDeterministic(t *testing.T) {
	ex := ExamplesFromWorkflows(synthWorkflows(40, 11))
	enc := func() []byte {
		m, err := Train(ex, TrainConfig{Trees: 10, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := m.Encode(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b := enc(), enc()
	if !bytes.Equal(a, b) {
		t.Fatal("two trainings with the same seed produced different model files")
	}
	m, err := Train(ex, TrainConfig{Trees: 10, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	if err := m.Encode(&c); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, c.Bytes()) {
		t.Fatal("different seeds produced identical models: the seed is not used")
	}
}
