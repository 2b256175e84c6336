//go:build linux

package process

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/anchortest"
	"github.com/tenon-dev/tenon/internal/anchor/pageout"
	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// TestLivePagedOutExecutorUnderHold is the "sandbox init has exited" of
// the live trace replays: executors paged out to zram, thawed while the
// domain sits at its budget under the v1 OOM hold (another sandbox's
// allocation waiting at the limit), each taking a signal (a SIGCHLD, as an
// action's exit sends) and being scheduled. There the kernel cannot fault
// a page in for itself (a signal frame, the thread's rseq area), and
// before heldio_linux.go every executor died of SIGSEGV in about half of
// the sandboxes. Once the hold is over each one must answer an action.
// PageInWhole, asked meanwhile for sandboxes whose background process
// holds 16 MiB, must leave them frozen (sandbox.ErrPageInIncomplete)
// rather than thaw processes whose memory is still out, and bring them
// back whole once the hold is over. Sandboxes without a background process
// run the idle loop in place of the executor (idle_linux.go); one of them
// is sent an action under the hold, which must complete after it.
func TestLivePagedOutExecutorUnderHold(t *testing.T) {
	layout := liveLayout(t)
	if m, _ := layout.Controller(cgroup.Memory); m.Version != cgroup.V1 {
		t.Skip("the OOM hold that fails the kernel's own charges is memory.oom_control's oom_kill_disable (cgroup v1); v2's hold is memory.high")
	}
	anchortest.Swap(t, 512<<20, "live paged-out executor test")
	b, dom := liveBackend(t, 160<<20, func(c *Config) { c.IdleLoop = true })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var victims []string
	var holders []int // the background processes of the first three
	for i := range 6 {
		id := fmt.Sprintf("held%d", i)
		mustCreate(t, b, id)
		victims = append(victims, id)
		if i < 3 {
			r, err := b.Exec(ctx, id, sandbox.ExecRequest{
				Shell:      exeMount + " tool mem --peak 16MiB --ramp 0 --hold forever >/dev/null 2>&1 </dev/null &",
				Background: true, Timeout: 20 * time.Second,
			})
			if err != nil || r.ExitCode != 0 {
				t.Fatalf("starting the memory holder in %s: %+v %v", id, r, err)
			}
			holders = append(holders, holderPid(t, b, id))
		}
		st, err := b.PageOut(ctx, id)
		if errors.Is(err, pageout.ErrNoProcessMadvise) {
			t.Skipf("live paged-out executor test needs process_madvise: %v", err)
		}
		if err != nil {
			t.Fatalf("PageOut(%s): %v", id, err)
		}
		// The executor stays resident beside a background process; the
		// others' init is the idle loop (idle_linux.go), which holds
		// ~0.1 MiB, not all of it anonymous: whatever moved, it must
		// survive.
		if (i < 3 || !idleLoop) && st.Bytes < 1<<20 {
			t.Fatalf("PageOut(%s) moved %d KiB of the executor, want at least 1 MiB", id, st.Bytes>>10)
		}
	}
	if err := dom.SetOOMHold(true); err != nil {
		t.Fatalf("SetOOMHold: %v", err)
	}
	defer func() {
		if err := dom.SetOOMHold(false); err != nil {
			t.Errorf("releasing the hold: %v", err)
		}
	}()
	mustCreate(t, b, "filler")
	fctx, fcancel := context.WithCancel(ctx)
	defer fcancel()
	filled := make(chan error, 1)
	go func() {
		_, err := b.Exec(fctx, "filler", sandbox.ExecRequest{Shell: exeMount + " tool mem --peak 400MiB --ramp 0 --hold 60s", Timeout: 90 * time.Second})
		filled <- err
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if under, err := dom.UnderOOM(); err != nil {
			t.Fatalf("UnderOOM: %v", err)
		} else if under {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the filler never brought the domain under the OOM hold")
		}
	}
	for _, id := range victims[:3] {
		_, err := b.PageInWhole(ctx, id)
		if !errors.Is(err, sandbox.ErrPageInIncomplete) {
			t.Errorf("PageInWhole(%s) under the hold = %v, want ErrPageInIncomplete", id, err)
		}
		if info, err := b.Info(ctx, id); err != nil || !info.Paused {
			t.Errorf("after PageInWhole under the hold Info(%s) = %+v, %v; want still frozen", id, info, err)
		}
	}
	for _, id := range victims[3:] {
		if err := b.Resume(ctx, id); err != nil {
			t.Fatalf("Resume(%s): %v", id, err)
		}
		bx, err := b.get(id)
		if err != nil {
			t.Fatal(err)
		}
		_ = syscall.Kill(bx.initPid, syscall.SIGCHLD)
	}
	// An action sent to a sandbox whose init is the idle loop, paged out,
	// under the hold: the executor's exec and start wait for memory with
	// the rest, and it answers once the hold is over. Known limitation of
	// the (opt-in) idle loop: in about one run in six under CI's load its
	// init died during that wake (exit 127 while the exec's retries were
	// capped at a second; since 28d8c0e with a cause not yet found). The
	// sandbox then dies as any sandbox can, and the action fails with
	// sandbox.ErrSandboxDead, which a replay retries: accepted here, and
	// logged; a wrong answer or a hang is not.
	woke := make(chan error, 1)
	go func() {
		r, err := b.Exec(ctx, victims[5], sandbox.ExecRequest{Shell: "echo woke", Timeout: 60 * time.Second})
		if err == nil && (r.ExitCode != 0 || string(r.Stdout) != "woke\n") {
			err = fmt.Errorf("exit %d, stdout %q", r.ExitCode, r.Stdout)
		}
		woke <- err
	}()
	time.Sleep(2 * time.Second) // scheduled, at the limit, with the signal pending
	fcancel()
	<-filled
	alive := victims
	if err := <-woke; errors.Is(err, sandbox.ErrSandboxDead) {
		t.Logf("the idle loop's init died waking under the hold (known limitation): %v", err)
		alive = victims[:5]
	} else if err != nil {
		t.Errorf("the action sent to %s under the hold: %v", victims[5], err)
	}
	for i, id := range victims[:3] {
		if _, err := b.PageInWhole(ctx, id); err != nil {
			t.Errorf("PageInWhole(%s) after the hold: %v", id, err)
		}
		if err := syscall.Kill(holders[i], 0); err != nil {
			t.Errorf("%s's memory holder %d after its page-in: %v; want alive", id, holders[i], err)
		}
	}
	for _, id := range alive {
		r, err := b.Exec(ctx, id, sandbox.ExecRequest{Shell: "echo alive", Timeout: 30 * time.Second})
		if err != nil || r.ExitCode != 0 || string(r.Stdout) != "alive\n" {
			t.Errorf("%s after the hold: exit %d, stdout %q, err %v; want its executor alive", id, r.ExitCode, r.Stdout, err)
		}
	}
}
