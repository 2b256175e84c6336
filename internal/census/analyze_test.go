package census

import (
	"testing"
	"time"
)

const ps = 4096

func h(c uint64) Hash { return Hash{Lo: c} }

func anon(pfn, content uint64, holders ...int32) Page {
	return Page{Kind: Anon, PFN: pfn, Hash: h(content), Holders: holders}
}

func file(ino uint64, off int64, content uint64, holders ...int32) Page {
	return Page{Kind: File, File: FileKey{Dev: 1, Ino: ino, Off: off * ps}, Hash: h(content), Holders: holders}
}

func snap(n int, elapsed time.Duration, pages ...Page) *Snapshot {
	s := &Snapshot{PageSize: ps, Elapsed: elapsed, Pages: pages}
	for i := 0; i < n; i++ {
		s.Siblings = append(s.Siblings, string(rune('a'+i)))
	}
	return s
}

// counts is a SampleResult in pages, for readable expectations.
type counts struct {
	real, oracle, dup, fileSame, anonFile, birth, later, all int64
}

func (c counts) bytes() SampleResult {
	return SampleResult{
		RealBytes: c.real * ps, OracleBytes: c.oracle * ps, DuplicateBytes: c.dup * ps,
		Classes:        Classes{FileSameContent: c.fileSame * ps, AnonEqualsFile: c.anonFile * ps, HeapBirth: c.birth * ps, HeapLater: c.later * ps},
		HeldByAllBytes: c.all * ps,
	}
}

func TestAnalyze(t *testing.T) {
	tests := []struct {
		name  string
		snaps []*Snapshot
		want  []counts
	}{
		{
			name:  "empty",
			snaps: []*Snapshot{snap(2, 0)},
			want:  []counts{{}},
		},
		{
			name: "all distinct",
			snaps: []*Snapshot{snap(2, 0,
				anon(1, 10, 0), anon(2, 11, 1), file(5, 0, 12, 0))},
			want: []counts{{real: 3, oracle: 3}},
		},
		{
			name: "shared frame counted once (fork, KSM)",
			snaps: []*Snapshot{snap(2, 0,
				anon(1, 10, 0), anon(1, 10, 1))},
			want: []counts{{real: 1, oracle: 1, all: 1}},
		},
		{
			name: "same file page mapped twice counted once",
			snaps: []*Snapshot{snap(2, 0,
				file(5, 0, 10, 0), file(5, 0, 10, 1), file(5, 1, 11))},
			want: []counts{{real: 2, oracle: 2, all: 1}},
		},
		{
			name: "file same content across inodes (copied repo)",
			snaps: []*Snapshot{snap(2, 0,
				file(5, 0, 10, 0), file(6, 0, 10, 1), file(7, 3, 10, 1), file(5, 1, 11, 0))},
			want: []counts{{real: 4, oracle: 2, dup: 2, fileSame: 2, all: 1}},
		},
		{
			name: "anon equals file block (read buffer, guest page cache)",
			snaps: []*Snapshot{snap(3, 0,
				file(5, 0, 10), anon(1, 10, 0), anon(2, 10, 1), anon(3, 10, 2), anon(4, 20, 0))},
			want: []counts{{real: 5, oracle: 2, dup: 3, anonFile: 3, all: 1}},
		},
		{
			name: "file and anon duplicates of one content: files first",
			snaps: []*Snapshot{snap(2, 0,
				file(5, 0, 10, 0), file(6, 0, 10), anon(1, 10, 1), anon(2, 10, 1))},
			want: []counts{{real: 4, oracle: 1, dup: 3, fileSame: 1, anonFile: 2, all: 1}},
		},
		{
			name: "heap duplicates in the first sample are born",
			snaps: []*Snapshot{snap(4, 15*time.Second,
				anon(1, 10, 0), anon(2, 10, 1), anon(3, 10, 2), anon(4, 10, 3),
				anon(5, 11, 0), anon(6, 11, 1), anon(7, 12, 2))},
			want: []counts{{real: 7, oracle: 3, dup: 4, birth: 4, all: 1}},
		},
		{
			name: "later samples split birth and later by content",
			snaps: []*Snapshot{
				snap(2, 15*time.Second,
					anon(1, 10, 0), anon(2, 10, 1), // born duplicate
					anon(3, 11, 0)), // unique at birth
				snap(2, 60*time.Second,
					anon(1, 10, 0), anon(2, 10, 1), anon(8, 10, 1), // one more copy than at birth: 1 birth + 1 later
					anon(3, 11, 0), anon(4, 11, 1), // was unique at birth: later
					anon(5, 12, 0), anon(6, 12, 0)), // new content: later, held by one sibling only
			},
			want: []counts{
				{real: 3, oracle: 2, dup: 1, birth: 1, all: 1},
				{real: 7, oracle: 3, dup: 4, birth: 1, later: 3, all: 2},
			},
		},
		{
			name: "born duplicate that shrank stays birth",
			snaps: []*Snapshot{
				snap(2, 0, anon(1, 10, 0), anon(2, 10, 0), anon(3, 10, 1)),
				snap(2, time.Minute, anon(1, 10, 0), anon(3, 10, 1)),
			},
			want: []counts{
				{real: 3, oracle: 1, dup: 2, birth: 2, all: 1},
				{real: 2, oracle: 1, dup: 1, birth: 1, all: 1},
			},
		},
		{
			name: "birth reference is heap only: anon=file at birth is not a born heap duplicate",
			snaps: []*Snapshot{
				snap(1, 0, file(5, 0, 10), anon(1, 10, 0), anon(2, 10, 0)),
				snap(1, time.Minute, anon(1, 10, 0), anon(2, 10, 0)),
			},
			want: []counts{
				{real: 3, oracle: 1, dup: 2, anonFile: 2, all: 1},
				{real: 2, oracle: 1, dup: 1, later: 1, all: 1},
			},
		},
		{
			name: "held by all needs every sibling, unattributed pages count for none",
			snaps: []*Snapshot{snap(3, 0,
				file(5, 0, 10), anon(1, 10, 0), anon(2, 10, 1), // siblings 0,1 only
				file(6, 0, 11, 0), anon(3, 11, 1), anon(4, 11, 2))}, // 0,1,2
			want: []counts{{real: 6, oracle: 2, dup: 4, anonFile: 4, all: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Analyze(tt.snaps, "cfg")
			if len(got) != len(tt.want) {
				t.Fatalf("got %d results, want %d", len(got), len(tt.want))
			}
			for i, w := range tt.want {
				wb := w.bytes()
				wb.Config, wb.N, wb.TimeS = "cfg", len(tt.snaps[i].Siblings), tt.snaps[i].Elapsed.Seconds()
				if got[i] != wb {
					t.Errorf("sample %d:\n got %+v\nwant %+v", i, got[i], wb)
				}
				if got[i].Classes.Sum() != got[i].DuplicateBytes {
					t.Errorf("sample %d: classes sum %d != duplicate %d", i, got[i].Classes.Sum(), got[i].DuplicateBytes)
				}
				if got[i].RealBytes-got[i].OracleBytes != got[i].DuplicateBytes {
					t.Errorf("sample %d: real − oracle != duplicate", i)
				}
			}
		})
	}
}

// TestAnalyzeInvariants checks, on pseudo-random swarms, that the classes
// always add up to real − oracle and that shares stay within [0, 1].
func TestAnalyzeInvariants(t *testing.T) {
	var seed uint64 = 1
	rnd := func(n uint64) uint64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return (seed >> 33) % n
	}
	for round := 0; round < 50; round++ {
		var snaps []*Snapshot
		for k := 0; k < 3; k++ {
			s := snap(int(1+rnd(5)), time.Duration(k)*time.Minute)
			for i := 0; i < 200; i++ {
				holder := int32(rnd(uint64(len(s.Siblings))))
				if rnd(3) == 0 {
					s.Pages = append(s.Pages, file(rnd(4), int64(rnd(8)), rnd(30), holder))
				} else {
					s.Pages = append(s.Pages, anon(rnd(150), rnd(30), holder))
				}
			}
			snaps = append(snaps, s)
		}
		for i, r := range Analyze(snaps, "x") {
			if r.Classes.Sum() != r.DuplicateBytes || r.RealBytes-r.OracleBytes != r.DuplicateBytes {
				t.Fatalf("round %d sample %d: %+v does not add up", round, i, r)
			}
			if s := r.Share(r.DuplicateBytes); s < 0 || s > 1 {
				t.Fatalf("round %d sample %d: duplicate share %v", round, i, s)
			}
			if r.HeldByAllBytes > r.OracleBytes {
				t.Fatalf("round %d sample %d: held by all %d > oracle %d", round, i, r.HeldByAllBytes, r.OracleBytes)
			}
		}
	}
}

// TestAnalyzeSharedLayer: the shared layer's pages count once, however
// many records (siblings mapping them, the layer scan) name them, and
// unflagged pages not at all.
func TestAnalyzeSharedLayer(t *testing.T) {
	shared := func(p Page) Page { p.Flags |= FlagShared; return p }
	s := snap(3, 0,
		shared(file(7, 0, 20, 0)), shared(file(7, 0, 20, 1)), shared(file(7, 0, 20, 2)), // one page, three holders
		shared(file(7, 1, 21)), // read, mapped by none
		file(8, 0, 22, 0),      // a sibling's own file
		anon(1, 23, 1))
	r := Analyze([]*Snapshot{s}, "image")[0]
	if want := int64(2 * ps); r.SharedLayerBytes != want {
		t.Errorf("shared layer %d bytes, want %d (two pages)", r.SharedLayerBytes, want)
	}
	if want := int64(4 * ps); r.RealBytes != want || r.DuplicateBytes != 0 || r.HeldByAllBytes != ps {
		t.Errorf("real %d, duplicate %d, held by all %d; want %d, 0, %d", r.RealBytes, r.DuplicateBytes, r.HeldByAllBytes, want, ps)
	}
}
