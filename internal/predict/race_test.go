//go:build race

package predict

// raceEnabled: the race detector slows forest training about 20-fold.
const raceEnabled = true
