package census

import (
	"fmt"
	"io"
)

// KPageFlags is one 64-bit entry of /proc/kpageflags
// (include/uapi/linux/kernel-page-flags.h).
type KPageFlags uint64

// kpageflags bits.
const (
	KPFLocked       = 0
	KPFReferenced   = 2
	KPFUptodate     = 3
	KPFDirty        = 4
	KPFLRU          = 5
	KPFActive       = 6
	KPFSlab         = 7
	KPFWriteback    = 8
	KPFReclaim      = 9
	KPFBuddy        = 10
	KPFMmap         = 11
	KPFAnon         = 12
	KPFSwapcache    = 13
	KPFSwapbacked   = 14
	KPFCompoundHead = 15
	KPFCompoundTail = 16
	KPFHuge         = 17
	KPFUnevictable  = 18
	KPFHWPoison     = 19
	KPFNoPage       = 20
	KPFKSM          = 21
	KPFTHP          = 22
	KPFOffline      = 23
	KPFZeroPage     = 24
	KPFIdle         = 25
	KPFPgtable      = 26
)

// Has reports whether bit b is set.
func (f KPageFlags) Has(b uint) bool { return uint64(f)>>b&1 == 1 }

// Anon reports an anonymous page (KPF_ANON).
func (f KPageFlags) Anon() bool { return f.Has(KPFAnon) }

// KSM reports a page merged by KSM.
func (f KPageFlags) KSM() bool { return f.Has(KPFKSM) }

// THP reports a page that is part of a transparent huge page.
func (f KPageFlags) THP() bool { return f.Has(KPFTHP) }

// Zero reports the zero page or the huge zero page.
func (f KPageFlags) Zero() bool { return f.Has(KPFZeroPage) }

// flagsReader reads kpageflags for many frames, one pread per run of
// consecutive frame numbers.
type flagsReader struct {
	r     io.ReaderAt
	words []uint64
	buf   []byte
}

// lookup fills out[i] with the flags of pfns[i]; pfns of zero get no flags.
func (fr *flagsReader) lookup(pfns []uint64, out []KPageFlags) error {
	for i := 0; i < len(pfns); {
		if pfns[i] == 0 {
			out[i] = 0
			i++
			continue
		}
		j := i + 1
		for j < len(pfns) && pfns[j] == pfns[j-1]+1 {
			j++
		}
		n := j - i
		if cap(fr.words) < n {
			fr.words = make([]uint64, n)
		}
		w := fr.words[:n]
		var err error
		if fr.buf, err = readUint64s(fr.r, pfns[i], w, fr.buf); err != nil {
			return fmt.Errorf("kpageflags at pfn %d: %w", pfns[i], err)
		}
		for k := range w {
			out[i+k] = KPageFlags(w[k])
		}
		i = j
	}
	return nil
}
