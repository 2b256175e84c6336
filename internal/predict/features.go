package predict

import (
	"hash/fnv"
	"math"
	"strings"
)

// Feature layout. The model file records FeatureCount and Load refuses a
// model whose count differs, so changing the layout requires retraining.
const (
	// HashBuckets is the number of hashed TF-IDF command-token buckets.
	HashBuckets = 64

	// HistoryK is how many of the latest completed peaks are averaged.
	HistoryK = 3

	numHistory   = 17
	offClass     = 0
	offHints     = offClass + numClasses
	offTokens    = offHints + 1
	offHistory   = offTokens + HashBuckets
	staticCount  = offHistory // class, hints and command features
	FeatureCount = offHistory + numHistory
)

// ClassVocabulary is the fixed one-hot vocabulary of action classes; any
// other class maps to "other". Tool names of agent harnesses are folded onto
// it by NormalizeClass.
var ClassVocabulary = [...]string{"bash", "run", "test", "build", "install",
	"read", "edit", "write", "search", "todo", "task", "web", "other"}

const numClasses = len(ClassVocabulary)

var classAliases = map[string]string{
	"multiedit": "edit", "notebookedit": "edit", "str_replace": "edit",
	"todowrite": "todo", "todoread": "todo", "grep": "search", "glob": "search",
	"webfetch": "web", "websearch": "web", "agent": "task", "shell": "bash",
}

// NormalizeClass lower-cases a class and folds known aliases onto
// ClassVocabulary; unknown classes become "other".
func NormalizeClass(c string) string {
	c = strings.ToLower(strings.TrimSpace(c))
	if a, ok := classAliases[c]; ok {
		return a
	}
	for _, v := range ClassVocabulary {
		if v == c {
			return c
		}
	}
	return "other"
}

func classIndex(c string) int {
	n := NormalizeClass(c)
	for i, v := range ClassVocabulary {
		if v == n {
			return i
		}
	}
	return numClasses - 1
}

// bucketOf hashes a token into a TF-IDF bucket (FNV-1a, stable across builds).
func bucketOf(tok string) int {
	h := fnv.New64a()
	h.Write([]byte(tok))
	return int(h.Sum64() % HashBuckets)
}

// tokenCounts returns the per-bucket term counts of a command.
func tokenCounts(cmd string) [HashBuckets]float64 {
	var tf [HashBuckets]float64
	for _, t := range Tokenize(cmd) {
		tf[bucketOf(t)]++
	}
	return tf
}

// learnIDF computes smoothed inverse document frequencies per bucket:
// idf = ln((1+N)/(1+df)) + 1.
func learnIDF(commands []string) []float64 {
	df := make([]float64, HashBuckets)
	for _, c := range commands {
		tf := tokenCounts(c)
		for b, n := range tf {
			if n > 0 {
				df[b]++
			}
		}
	}
	idf := make([]float64, HashBuckets)
	n := float64(len(commands))
	for b := range idf {
		idf[b] = math.Log((1+n)/(1+df[b])) + 1
	}
	return idf
}

const mib = 1 << 20

func toMiB(b int64) float64 { return float64(b) / mib }

// Features computes the causal feature vector of an action context into dst
// (allocated when nil or short) and returns it. idf holds HashBuckets
// weights; nil means all ones.
func Features(ctx ActionContext, idf []float64, dst []float64) []float64 {
	if cap(dst) < FeatureCount {
		dst = make([]float64, FeatureCount)
	}
	x := dst[:FeatureCount]
	clear(x)
	x[offClass+classIndex(ctx.Class)] = 1
	if ctx.Hints.Background {
		x[offHints] = 1
	}
	tf := tokenCounts(ctx.Command)
	var norm float64
	for b, n := range tf {
		if n == 0 {
			continue
		}
		w := 1 + math.Log(n)
		if idf != nil {
			w *= idf[b]
		}
		x[offTokens+b] = w
		norm += w * w
	}
	if norm > 0 {
		norm = math.Sqrt(norm)
		for b := range HashBuckets {
			x[offTokens+b] /= norm
		}
	}
	historyFeatures(ctx, x[offHistory:])
	return x
}

// Lines of the heavy-history counts: admission's heavy line at a 512 MiB
// and a 2 GiB budget (budget/8).
const (
	heavyLineLow  = 64 * mib
	heavyLineHigh = 256 * mib
)

// historyFeatures fills count, last peak, max peak, mean of the last HistoryK
// peaks, last average, last duration, elapsed time, time since the last
// completion, the last and max peak of earlier actions of the same class,
// the last peak of an earlier action with the same command (-1 when there are
// none), and then what the sandbox holds now and how much it grew since the
// workflow's first action (-1 when not measured), the trend of the peaks,
// the number of earlier actions that peaked at or above heavyLineLow and
// heavyLineHigh, and how many actions ago the latest of them at or above
// heavyLineLow ran (-1: none). Memory is in MiB, time in seconds.
func historyFeatures(ctx ActionContext, h []float64) {
	n := len(ctx.History)
	h[0] = float64(n)
	h[6] = ctx.ElapsedS
	h[8], h[9], h[10] = -1, -1, -1
	residentFeatures(ctx, h[11:13])
	heavyHistory(ctx.History, h[13:17])
	if n == 0 {
		h[7] = ctx.ElapsedS
		return
	}
	last := ctx.History[n-1]
	h[1] = toMiB(last.PeakBytes)
	var maxPeak int64
	cls := NormalizeClass(ctx.Class)
	for _, c := range ctx.History {
		maxPeak = max(maxPeak, c.PeakBytes)
		if NormalizeClass(c.Class) == cls {
			p := toMiB(c.PeakBytes)
			h[8] = p
			h[9] = max(h[9], p)
		}
		if c.Command == ctx.Command && c.Command != "" {
			h[10] = toMiB(c.PeakBytes)
		}
	}
	h[2] = toMiB(maxPeak)
	k := min(HistoryK, n)
	var sum float64
	for _, c := range ctx.History[n-k:] {
		sum += toMiB(c.PeakBytes)
	}
	h[3] = sum / float64(k)
	h[4] = toMiB(last.AvgBytes)
	h[5] = last.DurationS
	h[7] = ctx.ElapsedS - last.EndOffsetS
}

// residentFeatures fills what the sandbox holds now and its growth since
// the first action of the workflow whose level was measured, in MiB; -1
// when the level now is unknown.
func residentFeatures(ctx ActionContext, h []float64) {
	if ctx.ResidentBytes <= 0 {
		h[0], h[1] = -1, -1
		return
	}
	h[0] = toMiB(ctx.ResidentBytes)
	first := ctx.ResidentBytes
	for _, c := range ctx.History {
		if c.ResidentBytes > 0 {
			first = c.ResidentBytes
			break
		}
	}
	h[1] = toMiB(ctx.ResidentBytes - first)
}

// heavyHistory fills the trend of the peaks (mean of the latest HistoryK
// peaks minus the mean of the HistoryK before them, MiB; 0 with fewer than
// two), the counts of peaks at or above heavyLineLow and heavyLineHigh, and
// the distance in actions to the latest peak at or above heavyLineLow (-1:
// none).
func heavyHistory(hist []Completed, h []float64) {
	n := len(hist)
	h[3] = -1
	for i, c := range hist {
		if c.PeakBytes >= heavyLineLow {
			h[1]++
			h[3] = float64(n - i)
		}
		if c.PeakBytes >= heavyLineHigh {
			h[2]++
		}
	}
	if n < 2 {
		return
	}
	k := min(HistoryK, n/2)
	h[0] = meanPeakMiB(hist[n-k:]) - meanPeakMiB(hist[max(n-2*k, 0):n-k])
}

func meanPeakMiB(cs []Completed) float64 {
	var sum float64
	for _, c := range cs {
		sum += toMiB(c.PeakBytes)
	}
	return sum / float64(len(cs))
}
