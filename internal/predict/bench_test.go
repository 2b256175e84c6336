package predict

import (
	"testing"
)

// synthExamples returns about n examples from synthetic workflows.
func synthExamples(n int) []Example {
	ex := ExamplesFromWorkflows(synthWorkflows(n/14+1, 77))
	return ex[:min(n, len(ex))]
}

// BenchmarkPredict measures one Current prediction (features + three forests
// of 60 trees) with a 20-action history. Goal: <= 50 µs.
func BenchmarkPredict(b *testing.B) {
	ex := synthExamples(3000)
	m, err := Train(ex, TrainConfig{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	var ctx ActionContext
	for _, e := range ex {
		if len(e.Ctx.History) >= 20 {
			ctx = e.Ctx
			break
		}
	}
	b.ResetTimer()
	for b.Loop() {
		m.Predict(ctx)
	}
}

// BenchmarkTrain10k measures Train (three forests, defaults) on 10,000
// synthetic actions. Goal: <= 10 s.
func BenchmarkTrain10k(b *testing.B) {
	ex := synthExamples(10000)
	if len(ex) != 10000 {
		b.Fatalf("%d examples", len(ex))
	}
	for b.Loop() {
		if _, err := Train(ex, TrainConfig{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
