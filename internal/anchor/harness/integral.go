package harness

import "time"

// Sample is one reading of the sandbox's memory.
type Sample struct {
	At         time.Duration // since the start of the replay
	RAM        int64         // usage: resident memory and page cache, bytes
	Compressed int64         // RAM the sandbox's swapped pages cost in zram, bytes
}

const mib = 1 << 20

// Integrate returns the trapezoid integrals of RAM and of RAM+Compressed
// above floor, in MiB·s. Values below the floor count as 0.
func Integrate(samples []Sample, floor int64) (ram, backing float64) {
	above := func(v int64) float64 { return float64(max(v-floor, 0)) / mib }
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		dt := (b.At - a.At).Seconds()
		if dt <= 0 {
			continue
		}
		ram += dt * (above(a.RAM) + above(b.RAM)) / 2
		backing += dt * (above(a.RAM+a.Compressed) + above(b.RAM+b.Compressed)) / 2
	}
	return ram, backing
}
