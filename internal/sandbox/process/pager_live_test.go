//go:build linux

package process

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/anchortest"
	"github.com/tenon-dev/tenon/internal/anchor/pageout"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// TestLivePageOutIn pages out a sandbox whose background process holds
// 64 MiB of touched anonymous memory (zram swap on for the test), checks
// that the sandbox's memory at least halves and the process lives on, then
// pages it back in and checks the process got its memory back, runs and
// answers a signal.
func TestLivePageOutIn(t *testing.T) {
	anchortest.Swap(t, 512<<20, "live sandbox page-out test")
	b, _ := liveBackend(t, 1<<30)
	const id = "pager"
	mustCreate(t, b, id)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := b.Exec(ctx, id, sandbox.ExecRequest{
		Shell:      exeMount + " tool mem --peak 64MiB --ramp 0 --hold forever >/dev/null 2>&1 </dev/null &",
		Background: true, Timeout: 20 * time.Second,
	})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("starting the memory holder: %+v %v", r, err)
	}
	pid := holderPid(t, b, id)
	rss := func() pageout.Residency {
		res, err := (&pageout.Pager{}).Status(pid)
		if err != nil {
			t.Fatalf("holder %d: %v", pid, err)
		}
		return res
	}
	for deadline := time.Now().Add(20 * time.Second); rss().RssAnon < 64<<20; {
		if time.Now().After(deadline) {
			t.Fatalf("holder never reached 64 MiB: RssAnon %d MiB", rss().RssAnon>>20)
		}
		time.Sleep(50 * time.Millisecond)
	}
	anonBefore := rss().RssAnon

	out, err := b.PageOut(ctx, id)
	if errors.Is(err, pageout.ErrNoProcessMadvise) {
		t.Skipf("live sandbox page-out test needs process_madvise: %v", err)
	}
	if err != nil {
		t.Fatalf("PageOut: %v", err)
	}
	t.Logf("page-out %v: %d procs, memory %d -> %d KiB, anon out %d KiB; holder RssAnon %d -> %d KiB",
		out.Duration, out.Procs, out.MemoryBefore>>10, out.MemoryAfter>>10, out.Bytes>>10, anonBefore>>10, rss().RssAnon>>10)
	if out.MemoryAfter > out.MemoryBefore/2 {
		t.Errorf("page-out left %d of %d KiB, want at most half", out.MemoryAfter>>10, out.MemoryBefore>>10)
	}
	if out.Bytes < anonBefore/2 {
		t.Errorf("page-out moved %d KiB of anonymous memory, want at least half of the holder's %d KiB", out.Bytes>>10, anonBefore>>10)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("holder gone after page-out: %v", err)
	}
	if info, err := b.Info(ctx, id); err != nil || !info.Paused {
		t.Errorf("after page-out Info = %+v, %v; want paused", info, err)
	}
	again, err := b.PageOut(ctx, id)
	if err != nil {
		t.Fatalf("second PageOut: %v", err)
	}
	t.Logf("second page-out: anon out %d KiB", again.Bytes>>10)

	in, err := b.PageIn(ctx, id)
	if err != nil {
		t.Fatalf("PageIn: %v", err)
	}
	t.Logf("page-in %v: %d procs, memory %d -> %d KiB, faulted %d KiB; holder RssAnon %d KiB",
		in.Duration, in.Procs, in.MemoryBefore>>10, in.MemoryAfter>>10, in.Bytes>>10, rss().RssAnon>>10)
	if got := rss().RssAnon; got < anonBefore*8/10 {
		t.Errorf("after page-in the holder has %d KiB resident, want at least 80%% of %d KiB", got>>10, anonBefore>>10)
	}
	if info, err := b.Info(ctx, id); err != nil || info.Paused {
		t.Errorf("after page-in Info = %+v, %v; want thawed", info, err)
	}
	if _, err := b.PageIn(ctx, id); err != nil {
		t.Errorf("second PageIn: %v", err)
	}
	mustSh(t, b, id, "true")
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatalf("signalling the holder: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid), "maps")); errors.Is(err, os.ErrNotExist) || holderGone(b, id) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("holder did not exit on SIGTERM after page-in")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A sandbox with no process left but init pages out and in cleanly.
	if _, err := b.PageOut(ctx, id); err != nil {
		t.Errorf("PageOut of an idle sandbox: %v", err)
	}
	if _, err := b.PageIn(ctx, id); err != nil {
		t.Errorf("PageIn of an idle sandbox: %v", err)
	}
}

// holderPid waits for the sandbox's one process besides init.
func holderPid(t *testing.T, b *Backend, id string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		ps, err := b.Procs(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 1 {
			return ps[0].PID
		}
	}
	t.Fatal("the memory holder did not appear in the sandbox")
	return 0
}

// holderGone reports whether only init is left in the sandbox.
func holderGone(b *Backend, id string) bool {
	ps, err := b.Procs(context.Background(), id)
	return err == nil && len(ps) == 0
}
