package census

import (
	"math/rand/v2"
	"testing"
)

func TestHashPages(t *testing.T) {
	buf := make([]byte, 3*ps+10)
	fillRandom(buf, 2)
	copy(buf[ps:2*ps], buf[:ps])
	got := HashPages(nil, buf, ps)
	if len(got) != 4 {
		t.Fatalf("got %d hashes, want 4", len(got))
	}
	if got[0] != got[1] {
		t.Error("equal pages hash differently")
	}
	if got[0] == got[2] {
		t.Error("different pages hash equal")
	}
	tail := make([]byte, ps)
	copy(tail, buf[3*ps:])
	if got[3] != HashPage(tail) {
		t.Error("short last page is not hashed zero-padded")
	}
}

// BenchmarkHashPages measures page hashing throughput (goal ≥ 1 GB/s).
func BenchmarkHashPages(b *testing.B) {
	buf := make([]byte, 64<<20)
	fillRandom(buf, 1)
	dst := make([]Hash, 0, len(buf)/ps)
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for b.Loop() {
		dst = HashPages(dst[:0], buf, ps)
	}
	b.ReportMetric(float64(b.N)*float64(len(buf)/ps)/b.Elapsed().Seconds(), "pages/s")
}

// fillRandom fills b with pseudo-random bytes determined by seed.
func fillRandom(b []byte, seed byte) {
	var k [32]byte
	k[0] = seed
	_, _ = rand.NewChaCha8(k).Read(b)
}
