package census

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

const (
	pmP = uint64(1) << 63
	pmF = uint64(1) << 61
)

// fakeProc builds a procfs image: maps, pagemap (sparse, entries at
// addr/4096), mem (sparse, content at addr), map_files and kpageflags.
type fakeProc struct {
	t    *testing.T
	root string
}

func (f fakeProc) write(rel string, b []byte) {
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// writeAt writes chunks at byte offsets into one file.
func (f fakeProc) writeAt(rel string, chunks map[int64][]byte) {
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	fh, err := os.Create(p)
	if err != nil {
		f.t.Fatal(err)
	}
	defer fh.Close()
	for off, b := range chunks {
		if _, err := fh.WriteAt(b, off); err != nil {
			f.t.Fatal(err)
		}
	}
}

func page(seed byte) []byte {
	b := make([]byte, ps)
	fillRandom(b, seed)
	return b
}

func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// buildSwarm lays out two siblings:
//
//	pid 100 anon 0x10000: A(pfn 1000) B(pfn 1001, THP) zero-page(pfn 5) absent
//	pid 200 anon 0x10000: A(pfn 1000, shared frame) A(pfn 2000) X(pfn 2001)
//	pid 200 file 0x20000: file F = X Y (pfns 3000, 3001)
func buildSwarm(t *testing.T) (string, []byte) {
	f := fakeProc{t: t, root: t.TempDir()}
	A, B, X, Y := page(1), page(2), page(3), page(4)
	f.write("100/maps", []byte("10000-14000 rw-p 00000000 00:00 0 \n7fff0000-7fff1000 r-xp 00000000 00:00 0 [vdso]\n"))
	f.write("100/pagemap", at(16, pmP|1000, pmP|1001, pmP|5, 0))
	f.writeAt("100/mem", map[int64][]byte{0x10000: cat(A, B, make([]byte, ps))})
	f.write("200/maps", []byte("10000-13000 rw-p 00000000 00:00 0 \n20000-22000 r--s 00000000 fd:00 777 /data/f\n"))
	f.writeAt("200/pagemap", map[int64][]byte{16 * 8: words(pmP|1000, pmP|2000, pmP|2001), 32 * 8: words(pmP|pmF|3000, pmP|pmF|3001)})
	f.writeAt("200/mem", map[int64][]byte{0x10000: cat(A, A, X), 0x20000: cat(X, Y)})
	f.write("200/map_files/20000-22000", cat(X, Y))
	flags := map[int64][]byte{
		5 * 8:    words(1 << KPFZeroPage),
		1000 * 8: words(1<<KPFAnon, 1<<KPFAnon|1<<KPFTHP),
		2000 * 8: words(1<<KPFAnon, 1<<KPFAnon),
		3000 * 8: words(1<<KPFLRU, 1<<KPFLRU),
	}
	f.writeAt("kpageflags", flags)
	return f.root, cat(X, Y)
}

func TestSampleFixture(t *testing.T) {
	root, fileXY := buildSwarm(t)
	var log []string
	fz := &fakeFreezer{name: "swarm", log: &log}
	ws := t.TempDir()
	// Sibling b's workspace holds a copy of F: same content, another inode.
	if err := os.WriteFile(filepath.Join(ws, "copy"), fileXY, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := Options{
		Siblings: []Sibling{{Name: "a", Pids: []int{100}}, {Name: "b", Pids: []int{200, 300}, Dirs: []string{ws}}},
		Freezers: []Freezer{fz},
		Proc:     root,
		ZeroPFN:  77,
		PageSize: ps,
	}
	s, err := Sample(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0] != "freeze swarm" || log[1] != "thaw swarm" {
		t.Errorf("freezer calls = %v", log)
	}
	want := Stats{Processes: 2, Vanished: 1, Files: 2, ZeroPages: 1, THPPages: 1}
	if s.Stats != want {
		t.Errorf("stats = %+v, want %+v", s.Stats, want)
	}
	var anonN, fileN int
	for _, p := range s.Pages {
		switch p.Kind {
		case Anon:
			anonN++
		case File:
			fileN++
		}
	}
	// Frames 1000, 1001, 2000, 2001; file pages F:0, F:1, copy:0, copy:1
	// (mincore finds the freshly written files resident).
	if anonN != 4 || fileN != 4 {
		t.Fatalf("anon %d file %d pages, want 4 and 4: %+v", anonN, fileN, s.Pages)
	}
	r := Analyze([]*Snapshot{s}, "fixture")[0]
	want2 := counts{real: 8, oracle: 4, dup: 4, fileSame: 2, anonFile: 1, birth: 1, all: 1}.bytes()
	want2.Config, want2.N = "fixture", 2
	if r != want2 {
		t.Errorf("census\n got %+v\nwant %+v", r, want2)
	}

	t.Run("address filter", func(t *testing.T) {
		o := opts
		o.Siblings = []Sibling{{Name: "a", Pids: []int{100}}, {Name: "b", Pids: []int{200}}}
		o.Ranges = map[int][]AddrRange{100: {{0x10000, 0x11000}}, 200: {{0x11000, 0x12000}}}
		s, err := Sample(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		r := Analyze([]*Snapshot{s}, "f")[0]
		// Only A in frame 1000 (pid 100) and A in frame 2000 (pid 200).
		if r.RealBytes != 2*ps || r.DuplicateBytes != ps || r.Classes.HeapBirth != ps || r.HeldByAllBytes != ps {
			t.Errorf("filtered census = %+v", r)
		}
	})
	t.Run("hidden frame numbers", func(t *testing.T) {
		f := fakeProc{t: t, root: root}
		f.write("400/maps", []byte("10000-11000 rw-p 00000000 00:00 0 \n"))
		f.write("400/pagemap", at(16, pmP))
		f.write("400/mem", nil)
		o := opts
		o.Siblings = []Sibling{{Name: "a", Pids: []int{400}}}
		log = nil
		if _, err := Sample(context.Background(), o); !errors.Is(err, ErrNoPFN) {
			t.Errorf("err = %v, want ErrNoPFN", err)
		}
		if len(log) != 2 || log[1] != "thaw swarm" {
			t.Errorf("not thawed after error: %v", log)
		}
	})
	t.Run("freeze failure", func(t *testing.T) {
		o := opts
		log = nil
		o.Freezers = []Freezer{&fakeFreezer{name: "x", log: &log, freezeErr: errors.New("EBUSY")}}
		if _, err := Sample(context.Background(), o); !errors.Is(err, ErrFreeze) {
			t.Errorf("err = %v, want ErrFreeze", err)
		}
		if len(log) != 2 || log[1] != "thaw x" {
			t.Errorf("not thawed after failed freeze: %v", log)
		}
	})
	t.Run("no siblings", func(t *testing.T) {
		if _, err := Sample(context.Background(), Options{}); !errors.Is(err, ErrNoSiblings) {
			t.Errorf("err = %v, want ErrNoSiblings", err)
		}
	})
}
