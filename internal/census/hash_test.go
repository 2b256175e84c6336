package census

import (
	"math/rand/v2"
	"testing"
)

func TestHashPage(t *testing.T) {
	buf := make([]byte, 3*ps)
	fillRandom(buf, 2)
	copy(buf[ps:2*ps], buf[:ps])
	if HashPage(buf[:ps]) != HashPage(buf[ps:2*ps]) {
		t.Error("equal pages hash differently")
	}
	if HashPage(buf[:ps]) == HashPage(buf[2*ps:]) {
		t.Error("different pages hash equal")
	}
}

// BenchmarkHashPage measures page hashing throughput (goal ≥ 1 GB/s).
func BenchmarkHashPage(b *testing.B) {
	buf := make([]byte, 64<<20)
	fillRandom(buf, 1)
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for b.Loop() {
		for off := 0; off < len(buf); off += ps {
			_ = HashPage(buf[off : off+ps])
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(buf)/ps)/b.Elapsed().Seconds(), "pages/s")
}

// fillRandom fills b with pseudo-random bytes determined by seed.
func fillRandom(b []byte, seed byte) {
	var k [32]byte
	k[0] = seed
	_, _ = rand.NewChaCha8(k).Read(b)
}
