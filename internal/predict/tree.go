package predict

import (
	"fmt"
	"math/rand/v2"
)

// Tree is one CART regression tree stored as parallel arrays. Node 0 is the
// root; a node with Feature -1 is a leaf whose prediction is Value. An
// internal node sends x to Left when x[Feature] <= Threshold, else to Right.
type Tree struct {
	Feature   []int32   `json:"feature"`
	Threshold []float64 `json:"threshold"`
	Left      []int32   `json:"left"`
	Right     []int32   `json:"right"`
	Value     []float64 `json:"value"`
}

// Predict walks the tree for feature vector x.
func (t *Tree) Predict(x []float64) float64 {
	i := int32(0)
	for t.Feature[i] >= 0 {
		if x[t.Feature[i]] <= t.Threshold[i] {
			i = t.Left[i]
		} else {
			i = t.Right[i]
		}
	}
	return t.Value[i]
}

// validate checks the structure so that Predict cannot index out of range or
// loop: children always point forward.
func (t *Tree) validate(nFeatures int) error {
	n := len(t.Feature)
	if n == 0 || len(t.Threshold) != n || len(t.Left) != n || len(t.Right) != n || len(t.Value) != n {
		return fmt.Errorf("tree arrays are empty or of different lengths")
	}
	for i := range n {
		f := t.Feature[i]
		if f < 0 {
			continue
		}
		if int(f) >= nFeatures {
			return fmt.Errorf("node %d splits on feature %d of %d", i, f, nFeatures)
		}
		if l, r := int(t.Left[i]), int(t.Right[i]); l <= i || r <= i || l >= n || r >= n {
			return fmt.Errorf("node %d has children %d and %d outside (%d, %d)", i, l, r, i, n)
		}
	}
	return nil
}

// binned is the training matrix reduced to quantile bins, column-major.
type binned struct {
	thr  [][]float64 // per feature: ascending split thresholds (nil: feature unused)
	bins [][]uint8   // per feature: bin of each example; bin b means thr[b-1] < x <= thr[b]
	feat []int       // features with at least one threshold
}

// treeParams are the per-tree knobs of TrainConfig.
type treeParams struct {
	maxDepth, minLeaf, mtry int
}

type treeBuilder struct {
	d       *binned
	y       []float64
	p       treeParams
	rng     *rand.Rand
	t       *Tree
	featBuf []int
	cnt     []float64
	sum     []float64
}

// buildTree fits one tree on the rows idx (a bootstrap sample, may repeat).
func buildTree(d *binned, y []float64, idx []int, p treeParams, rng *rand.Rand) *Tree {
	b := &treeBuilder{d: d, y: y, p: p, rng: rng, t: &Tree{},
		featBuf: append([]int(nil), d.feat...),
		cnt:     make([]float64, 256), sum: make([]float64, 256)}
	b.grow(idx, 0)
	return b.t
}

func (b *treeBuilder) leaf(v float64) int32 {
	t := b.t
	t.Feature = append(t.Feature, -1)
	t.Threshold = append(t.Threshold, 0)
	t.Left = append(t.Left, 0)
	t.Right = append(t.Right, 0)
	t.Value = append(t.Value, v)
	return int32(len(t.Feature) - 1)
}

func (b *treeBuilder) grow(idx []int, depth int) int32 {
	var sum, sq float64
	for _, i := range idx {
		sum += b.y[i]
		sq += b.y[i] * b.y[i]
	}
	n := float64(len(idx))
	mean := sum / n
	if depth >= b.p.maxDepth || len(idx) < 2*b.p.minLeaf || sq/n-mean*mean <= 1e-12 {
		return b.leaf(mean)
	}
	bestF, bestS, bestGain := -1, 0, 1e-12
	base := sum * sum / n
	// Partial Fisher-Yates: the first mtry entries of featBuf are the sample.
	fs := b.featBuf
	m := min(b.p.mtry, len(fs))
	for k := range m {
		j := k + b.rng.IntN(len(fs)-k)
		fs[k], fs[j] = fs[j], fs[k]
	}
	for _, f := range fs[:m] {
		nb := len(b.d.thr[f]) + 1
		cnt, s := b.cnt[:nb], b.sum[:nb]
		clear(cnt)
		clear(s)
		col := b.d.bins[f]
		for _, i := range idx {
			cnt[col[i]]++
			s[col[i]] += b.y[i]
		}
		var nl, sl float64
		for bin := range nb - 1 {
			nl += cnt[bin]
			sl += s[bin]
			nr := n - nl
			if nl < float64(b.p.minLeaf) || cnt[bin] == 0 {
				continue
			}
			if nr < float64(b.p.minLeaf) {
				break
			}
			sr := sum - sl
			if gain := sl*sl/nl + sr*sr/nr - base; gain > bestGain {
				bestF, bestS, bestGain = f, bin, gain
			}
		}
	}
	if bestF < 0 {
		return b.leaf(mean)
	}
	// Partition idx in place: bins <= bestS go left.
	col := b.d.bins[bestF]
	l := 0
	for r := range idx {
		if int(col[idx[r]]) <= bestS {
			idx[l], idx[r] = idx[r], idx[l]
			l++
		}
	}
	node := b.leaf(mean)
	b.t.Feature[node] = int32(bestF)
	b.t.Threshold[node] = b.d.thr[bestF][bestS]
	left := b.grow(idx[:l], depth+1)
	right := b.grow(idx[l:], depth+1)
	b.t.Left[node], b.t.Right[node] = left, right
	return node
}
