package census

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
)

// words encodes 64-bit words as the kernel lays them out.
func words(ws ...uint64) []byte {
	b := make([]byte, 8*len(ws))
	for i, w := range ws {
		binary.NativeEndian.PutUint64(b[i*8:], w)
	}
	return b
}

// at places the words at word index idx of a sparse byte image.
func at(idx uint64, ws ...uint64) []byte {
	return append(make([]byte, idx*8), words(ws...)...)
}

func TestPagemapEntryBits(t *testing.T) {
	tests := []struct {
		name                   string
		e                      uint64
		present, swapped, file bool
		pfn                    uint64
	}{
		{name: "empty", e: 0},
		{name: "present anon exclusive", e: 1<<63 | 1<<56 | 0x1234, present: true, pfn: 0x1234},
		{name: "present file soft-dirty", e: 1<<63 | 1<<61 | 1<<55 | 42, present: true, file: true, pfn: 42},
		{name: "swapped has no pfn", e: 1<<62 | 0x77, swapped: true},
		{name: "max pfn", e: 1<<63 | (1<<55 - 1), present: true, pfn: 1<<55 - 1},
		{name: "hidden pfn", e: 1<<63 | 1<<61, present: true, file: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := PagemapEntry(tt.e)
			if e.Present() != tt.present || e.Swapped() != tt.swapped || e.FileShared() != tt.file || e.PFN() != tt.pfn {
				t.Errorf("decoded present=%v swapped=%v file=%v pfn=%#x",
					e.Present(), e.Swapped(), e.FileShared(), e.PFN())
			}
		})
	}
}

func TestReadPagemap(t *testing.T) {
	img := at(16, 1<<63|100, 0, 1<<63|1<<61|7)
	got, err := ReadPagemap(bytes.NewReader(img), 16*4096, 3, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].PFN() != 100 || got[1].Present() || got[2].PFN() != 7 || !got[2].FileShared() {
		t.Errorf("entries = %v", got)
	}
	if _, err := ReadPagemap(bytes.NewReader(img), 17*4096, 3, 4096); err == nil {
		t.Error("short read past the end: want error")
	}
}

func TestKPageFlags(t *testing.T) {
	tests := []struct {
		name                 string
		f                    uint64
		anon, ksm, thp, zero bool
	}{
		{name: "lru file page", f: 1<<KPFLRU | 1<<KPFMmap},
		{name: "anon thp", f: 1<<KPFAnon | 1<<KPFTHP | 1<<KPFCompoundHead, anon: true, thp: true},
		{name: "ksm", f: 1<<KPFAnon | 1<<KPFKSM, anon: true, ksm: true},
		{name: "zero page", f: 1 << KPFZeroPage, zero: true},
		{name: "huge zero page", f: 1<<KPFZeroPage | 1<<KPFTHP, zero: true, thp: true},
		{name: "hugetlb", f: 1<<KPFHuge | 1<<KPFCompoundTail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := KPageFlags(tt.f)
			if f.Anon() != tt.anon || f.KSM() != tt.ksm || f.THP() != tt.thp || f.Zero() != tt.zero {
				t.Errorf("decoded anon=%v ksm=%v thp=%v zero=%v", f.Anon(), f.KSM(), f.THP(), f.Zero())
			}
		})
	}
	// The numbers are the kernel ABI; a typo here would silently misclassify.
	for name, got := range map[string]int{"ANON": KPFAnon, "KSM": KPFKSM, "THP": KPFTHP, "ZERO": KPFZeroPage, "HUGE": KPFHuge, "HEAD": KPFCompoundHead, "TAIL": KPFCompoundTail} {
		want := map[string]int{"ANON": 12, "KSM": 21, "THP": 22, "ZERO": 24, "HUGE": 17, "HEAD": 15, "TAIL": 16}[name]
		if got != want {
			t.Errorf("KPF_%s = %d, want %d", name, got, want)
		}
	}
}

type countingReaderAt struct {
	r     io.ReaderAt
	reads int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}

func TestFlagsReaderBatchesRuns(t *testing.T) {
	img := at(10, 1<<KPFAnon, 1<<KPFAnon|1<<KPFTHP, 1<<KPFAnon|1<<KPFTHP, 0, 0, 1<<KPFZeroPage)
	cr := &countingReaderAt{r: bytes.NewReader(img)}
	fr := &flagsReader{r: cr}
	pfns := []uint64{10, 11, 12, 0, 15, 0}
	out := make([]KPageFlags, len(pfns))
	if err := fr.lookup(pfns, out); err != nil {
		t.Fatal(err)
	}
	want := []KPageFlags{1 << KPFAnon, 1<<KPFAnon | 1<<KPFTHP, 1<<KPFAnon | 1<<KPFTHP, 0, 1 << KPFZeroPage, 0}
	for i := range want {
		if out[i] != want[i] {
			t.Errorf("flags[%d] = %#x, want %#x", i, out[i], want[i])
		}
	}
	if cr.reads != 2 {
		t.Errorf("reads = %d, want 2 (one per run of consecutive frames)", cr.reads)
	}
	if err := fr.lookup([]uint64{99}, out[:1]); err == nil {
		t.Error("frame past the end: want error")
	}
}
