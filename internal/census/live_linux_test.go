package census

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const childEnv = "TENON_CENSUS_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		if err := censusChild(spec); err != nil {
			fmt.Fprintln(os.Stderr, "census child:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const (
	anonSize = 8 << 20
	fileSize = 4 << 20
	lateSize = 1 << 20
	bigSize  = 256 << 20
)

// censusChild maps the regions its spec names (";"-separated):
//
//	anon:S     8 MiB anonymous memory filled from seed S
//	file:P     map file P shared read-only and touch every page
//	copy:P     4 MiB anonymous memory holding a copy of file P
//	big:S      256 MiB anonymous memory filled from seed S
//	late:S:T   1 MiB anonymous from seed S, rewritten from seed T on "go"
//
// prints "READY lo-hi ..." (hex ranges), answers "go" with "DONE" and
// exits at end of input.
func censusChild(spec string) error {
	var ranges []string
	var late []func()
	anonMap := func(n int) ([]byte, error) {
		return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	}
	add := func(b []byte) {
		lo := uintptrOf(b)
		ranges = append(ranges, fmt.Sprintf("%x-%x", lo, lo+uintptr(len(b))))
	}
	for _, part := range strings.Split(spec, ";") {
		kind, arg, _ := strings.Cut(part, ":")
		switch kind {
		case "anon":
			seed, _ := strconv.Atoi(arg)
			b, err := anonMap(anonSize)
			if err != nil {
				return err
			}
			fillRandom(b, byte(seed))
			add(b)
		case "big":
			seed, _ := strconv.Atoi(arg)
			b, err := anonMap(bigSize)
			if err != nil {
				return err
			}
			fillRandom(b, byte(seed))
			add(b)
		case "late":
			a, c, _ := strings.Cut(arg, ":")
			s1, _ := strconv.Atoi(a)
			s2, _ := strconv.Atoi(c)
			b, err := anonMap(lateSize)
			if err != nil {
				return err
			}
			fillRandom(b, byte(s1))
			add(b)
			if s2 != s1 {
				late = append(late, func() { fillRandom(b, byte(s2)) })
			}
		case "file", "copy":
			f, err := os.Open(arg)
			if err != nil {
				return err
			}
			data, err := unix.Mmap(int(f.Fd()), 0, fileSize, unix.PROT_READ, unix.MAP_SHARED)
			f.Close()
			if err != nil {
				return err
			}
			for i := 0; i < len(data); i += os.Getpagesize() {
				sink += data[i] // package-level, so the read is not optimized away
			}
			if kind == "file" {
				add(data)
				continue
			}
			b, err := anonMap(fileSize)
			if err != nil {
				return err
			}
			copy(b, data)
			add(b)
		default:
			return fmt.Errorf("bad spec %q", part)
		}
	}
	fmt.Printf("READY %s\n", strings.Join(ranges, " "))
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if sc.Text() == "go" {
			for _, f := range late {
				f()
			}
			fmt.Println("DONE")
		}
	}
	return nil
}

type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Scanner
	ranges []AddrRange
}

func startChild(t testing.TB, spec string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+spec)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	})
	line := c.expect(t, "READY")
	for _, r := range strings.Fields(line)[1:] {
		lo, hi, _ := strings.Cut(r, "-")
		a, _ := strconv.ParseUint(lo, 16, 64)
		b, _ := strconv.ParseUint(hi, 16, 64)
		c.ranges = append(c.ranges, AddrRange{a, b})
	}
	return c
}

func (c *child) expect(t testing.TB, prefix string) string {
	t.Helper()
	if !c.out.Scan() || !strings.HasPrefix(c.out.Text(), prefix) {
		t.Fatalf("child %d: want %q, got %q (%v)", c.cmd.Process.Pid, prefix, c.out.Text(), c.out.Err())
	}
	return c.out.Text()
}

// v1Freezer is a cgroup v1 freezer group made by hand for the test.
type v1Freezer struct{ dir string }

func (f v1Freezer) set(ctx context.Context, state string) error {
	if err := os.WriteFile(filepath.Join(f.dir, "freezer.state"), []byte(state), 0o644); err != nil {
		return err
	}
	for {
		b, err := os.ReadFile(filepath.Join(f.dir, "freezer.state"))
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(b)) == state {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (f v1Freezer) Freeze(ctx context.Context) error { return f.set(ctx, "FROZEN") }
func (f v1Freezer) Thaw(ctx context.Context) error   { return f.set(ctx, "THAWED") }
func (f v1Freezer) Frozen() (bool, error) {
	b, err := os.ReadFile(filepath.Join(f.dir, "freezer.state"))
	return strings.TrimSpace(string(b)) == "FROZEN", err
}

// newV1Freezer makes tenon-test-census-<pid> under the v1 freezer
// hierarchy, or returns nil when there is none.
func newV1Freezer(t testing.TB, pids []int) Freezer {
	root := "/sys/fs/cgroup/freezer"
	if _, err := os.Stat(filepath.Join(root, "freezer.state")); err != nil {
		if _, err := os.Stat(filepath.Join(root, "cgroup.procs")); err != nil {
			t.Logf("no cgroup v1 freezer hierarchy at %s: sampling without freezing", root)
			return nil
		}
	}
	dir := filepath.Join(root, fmt.Sprintf("tenon-test-census-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("creating freezer cgroup: %v", err)
	}
	f := v1Freezer{dir: dir}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = f.Thaw(ctx)
		// Children are killed by their own cleanups, registered later and so
		// run earlier; move anything left back to the root before rmdir.
		for _, pid := range pids {
			_ = os.WriteFile(filepath.Join(root, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
		}
		if err := os.Remove(dir); err != nil {
			t.Errorf("removing %s: %v", dir, err)
		}
	})
	for _, pid := range pids {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			t.Fatalf("adding %d to freezer: %v", pid, err)
		}
	}
	return f
}

func liveSkip(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: pagemap frame numbers and /proc/kpageflags")
	}
	if f, err := os.Open("/proc/kpageflags"); err != nil {
		t.Skipf("needs /proc/kpageflags (CONFIG_PROC_PAGE_MONITOR): %v", err)
	} else {
		f.Close()
	}
	if pfn, err := ZeroPFN("/proc"); err != nil || pfn == 0 {
		t.Skipf("needs pagemap page frame numbers (CAP_SYS_ADMIN): pfn %d, %v", pfn, err)
	}
}

// TestLiveCensus runs four children and checks every class with exact byte
// counts. The census is restricted to the ranges the children report, so
// the Go runtime's own pages do not enter it.
func TestLiveCensus(t *testing.T) {
	liveSkip(t)
	dir := t.TempDir()
	content := make([]byte, fileSize)
	fillRandom(content, 3)
	f1, f2 := filepath.Join(dir, "f1"), filepath.Join(dir, "f2")
	for _, p := range []string{f1, f2} {
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kids := []*child{
		startChild(t, "anon:1;file:"+f1),
		startChild(t, "anon:1;file:"+f1),
		startChild(t, "anon:2;file:"+f1+";late:4:4"),
		startChild(t, "file:"+f1+";file:"+f2+";copy:"+f1+";late:5:4"),
	}
	opts := Options{Ranges: map[int][]AddrRange{}, Start: time.Now()}
	var pids []int
	for i, k := range kids {
		pid := k.cmd.Process.Pid
		pids = append(pids, pid)
		opts.Siblings = append(opts.Siblings, Sibling{Name: fmt.Sprintf("s%d", i), Pids: []int{pid}})
		opts.Ranges[pid] = k.ranges
	}
	if fz := newV1Freezer(t, pids); fz != nil {
		opts.Freezers = []Freezer{fz}
	}

	s1, err := Sample(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sample 1: %d pages in %v (frozen %v), stats %+v", len(s1.Pages), s1.Duration, s1.Freeze, s1.Stats)
	// Child 3 rewrites its late region with child 2's content: a heap
	// duplicate that appears after the first sample.
	fmt.Fprintln(kids[3].stdin, "go")
	kids[3].expect(t, "DONE")
	s2, err := Sample(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	res := Analyze([]*Snapshot{s1, s2}, "live")
	want := []SampleResult{
		{
			// anon 3×8 + copy 4 + late 2×1; files f1, f2 4 each.
			RealBytes:      (24 + 4 + 2 + 8) * mib,
			OracleBytes:    (8 + 8 + 4 + 2) * mib,
			DuplicateBytes: 16 * mib,
			Classes:        Classes{FileSameContent: 4 * mib, AnonEqualsFile: 4 * mib, HeapBirth: 8 * mib},
			HeldByAllBytes: 4 * mib,
		},
		{
			RealBytes:      (24 + 4 + 2 + 8) * mib,
			OracleBytes:    (8 + 8 + 4 + 1) * mib,
			DuplicateBytes: 17 * mib,
			Classes:        Classes{FileSameContent: 4 * mib, AnonEqualsFile: 4 * mib, HeapBirth: 8 * mib, HeapLater: 1 * mib},
			HeldByAllBytes: 4 * mib,
		},
	}
	for i, w := range want {
		got := res[i]
		w.Config, w.N, w.TimeS = "live", 4, got.TimeS
		if got != w {
			t.Errorf("sample %d:\n got %+v\nwant %+v", i, got, w)
		}
	}
	if opts.Freezers != nil {
		for _, fz := range opts.Freezers {
			if frozen, _ := fz.(v1Freezer).Frozen(); frozen {
				t.Error("siblings left frozen after the sample")
			}
		}
		if s1.Freeze <= 0 || s1.Freeze > s1.Duration {
			t.Errorf("freeze window %v outside sample duration %v", s1.Freeze, s1.Duration)
		}
	}
	var buf strings.Builder
	if err := WriteTable(&buf, res); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", buf.String())
}

// BenchmarkSampleLive times one census sample of two children holding
// 256 MiB of identical anonymous memory each (the whole processes, Go
// runtime included), frozen through a v1 freezer when there is one.
func BenchmarkSampleLive(b *testing.B) {
	liveSkip(b)
	kids := []*child{startChild(b, "big:1"), startChild(b, "big:1")}
	var opts Options
	var pids []int
	for i, k := range kids {
		pids = append(pids, k.cmd.Process.Pid)
		opts.Siblings = append(opts.Siblings, Sibling{Name: fmt.Sprintf("s%d", i), Pids: pids[i:]})
	}
	if fz := newV1Freezer(b, pids); fz != nil {
		opts.Freezers = []Freezer{fz}
	}
	var s *Snapshot
	var err error
	for b.Loop() {
		if s, err = Sample(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
	r := Analyze([]*Snapshot{s}, "bench")[0]
	b.ReportMetric(float64(len(s.Pages))*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(s.Freeze.Seconds()*1000, "freeze-ms")
	b.ReportMetric(float64(r.RealBytes)/(1<<20), "real-MiB")
	b.ReportMetric(float64(r.DuplicateBytes)/(1<<20), "dup-MiB")
}
