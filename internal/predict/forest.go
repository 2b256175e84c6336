package predict

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// Forest is a bagged ensemble of regression trees; its prediction is the mean
// of its trees' predictions.
type Forest struct {
	Trees []*Tree `json:"trees"`
}

// Predict returns the mean tree prediction for x.
func (f *Forest) Predict(x []float64) float64 {
	var s float64
	for _, t := range f.Trees {
		s += t.Predict(x)
	}
	return s / float64(len(f.Trees))
}

// ForestConfig are the knobs of one forest.
type ForestConfig struct {
	Trees           int     // number of trees
	MaxDepth        int     // maximum depth of a tree
	MinLeaf         int     // minimum examples in a leaf
	FeatureFraction float64 // share of the allowed features tried at each split
	MaxBins         int     // at most this many split thresholds per feature (<= 255)
	Seed            uint64
}

// FitForest fits a forest to rows X (all of equal length) and targets y,
// splitting only on the features listed in allowed (nil: all). Fitting is
// deterministic for a seed: every tree draws from its own generator, so the
// parallel build does not change the result.
func FitForest(X [][]float64, y []float64, allowed []int, cfg ForestConfig) *Forest {
	if allowed == nil && len(X) > 0 {
		allowed = make([]int, len(X[0]))
		for i := range allowed {
			allowed[i] = i
		}
	}
	d := binFeatures(X, allowed, min(max(cfg.MaxBins, 2), 255))
	p := treeParams{maxDepth: cfg.MaxDepth, minLeaf: max(cfg.MinLeaf, 1),
		mtry: max(1, int(cfg.FeatureFraction*float64(len(allowed))+0.5))}
	f := &Forest{Trees: make([]*Tree, cfg.Trees)}
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for k := range next {
				rng := rand.New(rand.NewPCG(cfg.Seed, uint64(k)+1))
				idx := make([]int, len(y))
				for i := range idx {
					idx[i] = rng.IntN(len(y))
				}
				f.Trees[k] = buildTree(d, y, idx, p, rng)
			}
		})
	}
	for k := range cfg.Trees {
		next <- k
	}
	close(next)
	wg.Wait()
	return f
}

// binFeatures chooses up to maxBins thresholds per allowed feature: the
// midpoints between consecutive distinct values when there are few, else
// midpoints at evenly spaced ranks of the distinct values.
func binFeatures(X [][]float64, allowed []int, maxBins int) *binned {
	nf := 0
	if len(X) > 0 {
		nf = len(X[0])
	}
	d := &binned{thr: make([][]float64, nf), bins: make([][]uint8, nf)}
	col := make([]float64, len(X))
	for _, f := range allowed {
		for i, x := range X {
			col[i] = x[f]
		}
		u := slices.Clone(col)
		slices.Sort(u)
		u = slices.Compact(u)
		if len(u) < 2 {
			continue
		}
		var thr []float64
		if len(u)-1 <= maxBins {
			for i := 1; i < len(u); i++ {
				thr = append(thr, (u[i-1]+u[i])/2)
			}
		} else {
			for k := 1; k <= maxBins; k++ {
				i := k * len(u) / (maxBins + 1)
				t := (u[i-1] + u[i]) / 2
				if len(thr) == 0 || thr[len(thr)-1] < t {
					thr = append(thr, t)
				}
			}
		}
		bins := make([]uint8, len(X))
		for i, x := range col {
			b, _ := slices.BinarySearch(thr, x)
			bins[i] = uint8(b)
		}
		d.thr[f], d.bins[f] = thr, bins
		d.feat = append(d.feat, f)
	}
	return d
}
