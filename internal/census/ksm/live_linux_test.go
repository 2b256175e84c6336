package ksm

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/census"
)

const childEnv = "TENON_KSM_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "stat":
		err := ExecWithMerge([]string{"cat", "/proc/self/ksm_stat"})
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	case "exec-hold":
		os.Setenv(childEnv, "hold")
		err := ExecWithMerge([]string{os.Args[0], "-test.run=^$"})
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	case "hold":
		hold()
	}
}

const holdSize = 4 << 20

// hold maps 4 MiB of anonymous memory with a fixed pseudo-random content,
// prints its range and waits for stdin to close.
func hold() {
	b, err := unix.Mmap(-1, 0, holdSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	x := uint64(88172645463325252)
	for i := 0; i < len(b); i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		for j := 0; j < 8; j++ {
			b[i+j] = byte(x >> (8 * j))
		}
	}
	lo := uintptr(unsafe.Pointer(&b[0]))
	fmt.Printf("READY %x %x\n", lo, lo+uintptr(len(b)))
	bufio.NewScanner(os.Stdin).Scan()
	os.Exit(0)
}

func needMerge(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/ksm_stat"); err != nil {
		t.Skipf("needs /proc/PID/ksm_stat and PR_SET_MEMORY_MERGE (Linux 6.7+): %v", err)
	}
}

func TestExecWithMergeSetsMergeAny(t *testing.T) {
	needMerge(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=stat")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "ksm_merge_any: yes") {
		t.Errorf("exec'd program is not merge-any:\n%s", out)
	}
	if err := ExecWithMerge(nil); err == nil {
		t.Error("empty argv: want error")
	}
}

// TestLiveMergeAndCensus runs two merge-any holders of identical memory,
// lets KSM merge them, and checks that the census then sees one copy.
func TestLiveMergeAndCensus(t *testing.T) {
	needMerge(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to drive /sys/kernel/mm/ksm and read pagemap frames")
	}
	k := New("")
	if _, err := k.Read(); err != nil {
		t.Skipf("needs KSM sysfs: %v", err)
	}
	var sibs []census.Sibling
	ranges := map[int][]census.AddrRange{}
	for i := 0; i < 2; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=exec-hold")
		cmd.Stderr = os.Stderr
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
		sc := bufio.NewScanner(stdout)
		if !sc.Scan() {
			t.Fatalf("child %d gave no range: %v", i, sc.Err())
		}
		f := strings.Fields(sc.Text())
		lo, _ := strconv.ParseUint(f[1], 16, 64)
		hi, _ := strconv.ParseUint(f[2], 16, 64)
		pid := cmd.Process.Pid
		sibs = append(sibs, census.Sibling{Name: strconv.Itoa(i), Pids: []int{pid}})
		ranges[pid] = []census.AddrRange{{Start: lo, End: hi}}
	}
	sample := func() census.SampleResult {
		s, err := census.Sample(context.Background(), census.Options{Siblings: sibs, Ranges: ranges})
		if err != nil {
			t.Fatal(err)
		}
		return census.Analyze([]*census.Snapshot{s}, "ksm")[0]
	}
	before := sample()
	if before.DuplicateBytes != holdSize {
		t.Fatalf("before KSM: duplicate %d, want %d", before.DuplicateBytes, holdSize)
	}
	restore, err := k.Start(Settings{PagesToScan: 20000, SleepMillisecs: 10})
	t.Cleanup(func() {
		if restore != nil {
			if err := restore(); err != nil {
				t.Errorf("restoring ksm: %v", err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	if err := k.WaitFullScans(ctx, 3, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	st, err := k.Read()
	if err != nil {
		t.Fatal(err)
	}
	after := sample()
	t.Logf("3 full scans in %v; ksm %+v; census before %+v after %+v", time.Since(start), st, before, after)
	if st.PagesSharing < holdSize/4096 {
		t.Errorf("pages_sharing = %d, want ≥ %d", st.PagesSharing, holdSize/4096)
	}
	if after.RealBytes != holdSize || after.DuplicateBytes != 0 || after.HeldByAllBytes != holdSize {
		t.Errorf("after KSM: census %+v, want one 4 MiB copy held by both", after)
	}
}
