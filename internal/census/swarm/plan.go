package swarm

import (
	"math/rand/v2"
)

// Steps is what one round of a sibling does besides its LSP requests.
type Steps struct {
	Grep  bool // grep the repository (every round)
	Build bool // go build ./... (every third round)
	Test  bool // go test of one small package (every second round)
	Edit  bool // append a comment to one file and push it to the server (every round)
}

// RoundPlan returns the steps of round r (1-based), per seed 002: grep and
// one private edit every round, a full typecheck every third round, a test
// run every second round.
func RoundPlan(r int) Steps {
	return Steps{Grep: true, Edit: true, Build: r > 0 && r%3 == 0, Test: r > 0 && r%2 == 0}
}

// Picker chooses the files a sibling edits and the patterns it greps: a
// sequence determined by the run seed and the sibling's index, so siblings
// do similar but not identical work and a rerun repeats it.
type Picker struct {
	rng *rand.Rand
}

// NewPicker returns the picker of sibling index under seed.
func NewPicker(seed int64, index int) *Picker {
	return &Picker{rng: rand.New(rand.NewPCG(uint64(seed), uint64(index)+0x9e3779b97f4a7c15))}
}

// File picks one of files (nil when files is empty).
func (p *Picker) File(files []string) string {
	if len(files) == 0 {
		return ""
	}
	return files[p.rng.IntN(len(files))]
}

// grepPatterns are what a sibling greps for, one per round.
var grepPatterns = []string{"func New", "TODO", "interface {", "return nil, err", "fmt.Errorf", "range ", "struct {", "const ("}

// Pattern picks a grep pattern.
func (p *Picker) Pattern() string {
	return grepPatterns[p.rng.IntN(len(grepPatterns))]
}
