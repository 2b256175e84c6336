//go:build linux

package process

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/pageout"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// initState reads the sandbox's init from the host: its argv[1] (the
// executor, woken or not, or the idle loop) and its RssAnon in bytes.
func initState(t *testing.T, b *Backend, id string) (mode string, anon int64) {
	t.Helper()
	bx, err := b.get(id)
	if err != nil {
		t.Fatal(err)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", bx.initPid))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range strings.Split(string(cmdline), "\x00") {
		if a == initArg || a == idleArg || a == wakeArg {
			mode = a
			break
		}
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", bx.initPid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := pageout.ParseStatus(f)
	if err != nil {
		t.Fatal(err)
	}
	return mode, st.RssAnon
}

// idleSandbox makes a 1 GiB backend with Config.IdleLoop and the
// sandbox id in it; it skips where the build has no idle loop.
func idleSandbox(t *testing.T, id string) *Backend {
	t.Helper()
	if !idleLoop {
		t.Skip("built without cgo: no idle loop")
	}
	b, _ := liveBackend(t, 1<<30, func(c *Config) { c.IdleLoop = true })
	mustCreate(t, b, id)
	return b
}

// TestLiveExecutorHibernates: an idle sandbox's init is the idle loop,
// holding a fraction of what the resident executor holds; each action
// wakes the executor (still confined), and its result, timeouts and what
// follows are as before. A background process keeps the executor
// resident until it is gone.
func TestLiveExecutorHibernates(t *testing.T) {
	b := idleSandbox(t, "idle")
	const id = "idle"
	mode, idleAnon := initState(t, b, id)
	if mode != idleArg {
		t.Fatalf("after Create init runs %q, want the idle loop", mode)
	}
	t.Logf("idle loop: RssAnon %d KiB", idleAnon>>10)

	for i := range 20 {
		out := mustSh(t, b, id, fmt.Sprintf("echo action-%d; grep -E '^(NoNewPrivs|Seccomp|Seccomp_filters):' /proc/self/status", i))
		if !strings.HasPrefix(out, fmt.Sprintf("action-%d\n", i)) {
			t.Fatalf("action %d printed %q", i, out)
		}
		for _, want := range []string{"NoNewPrivs:\t1", "Seccomp:\t2"} {
			if !strings.Contains(out, want) {
				t.Fatalf("action %d after a wake lacks %q: %q", i, want, out)
			}
		}
		if strings.Contains(out, "Seccomp_filters:") && !strings.Contains(out, "Seccomp_filters:\t1\n") {
			t.Fatalf("action %d: the filter was installed again on a wake: %q", i, out)
		}
		if mode, _ := initState(t, b, id); mode != idleArg {
			t.Fatalf("after action %d init runs %q, want the idle loop", i, mode)
		}
	}

	r, err := b.Exec(liveCtx(t), id, sandbox.ExecRequest{Shell: "sleep 30", Timeout: time.Second})
	if err != nil || !r.TimedOut {
		t.Fatalf("timed action: %+v, %v; want timed out", r, err)
	}
	if out := mustSh(t, b, id, "echo after-timeout"); out != "after-timeout\n" {
		t.Fatalf("after the timeout: %q", out)
	}

	r, err = b.Exec(liveCtx(t), id, sandbox.ExecRequest{Shell: "sleep 300 >/dev/null 2>&1 & echo $!", Background: true, Timeout: 10 * time.Second})
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("background action: %+v, %v", r, err)
	}
	bg, err := strconv.Atoi(strings.TrimSpace(string(r.Stdout)))
	if err != nil {
		t.Fatalf("background action printed %q, want its pid", r.Stdout)
	}
	mode, residentAnon := initState(t, b, id)
	if mode != wakeArg {
		t.Fatalf("with a background process init runs %q, want the woken executor", mode)
	}
	t.Logf("resident executor: RssAnon %d KiB", residentAnon>>10)
	if idleAnon*2 > residentAnon {
		t.Errorf("the idle loop holds %d KiB, the resident executor %d KiB: want less than half", idleAnon>>10, residentAnon>>10)
	}
	// By pid: a busybox shell may run the sleep in a forked shell, named sh.
	// kill -0 succeeds until init has reaped it.
	mustSh(t, b, id, fmt.Sprintf("kill %d; while kill -0 %d 2>/dev/null; do sleep 0.05; done", bg, bg))
	if mode, _ := initState(t, b, id); mode != idleArg {
		t.Fatalf("once the background process is gone init runs %q, want the idle loop", mode)
	}
}

// TestLiveResidentExecutor: without Config.IdleLoop the executor stays.
func TestLiveResidentExecutor(t *testing.T) {
	b, _ := liveBackend(t, 1<<30)
	const id = "resident"
	mustCreate(t, b, id)
	if out := mustSh(t, b, id, "echo hi"); out != "hi\n" {
		t.Fatalf("action printed %q", out)
	}
	if mode, _ := initState(t, b, id); mode != initArg {
		t.Fatalf("init runs %q, want the executor it started as", mode)
	}
}

// TestLiveFreezeDuringHibernation: the gate freezes sandboxes whenever it
// likes, also while an executor execs the idle loop, where a freeze used
// to wait for ever (exec waits for the executor's other threads to exit,
// and frozen threads never do: the group stays FREEZING). Freezes and
// thaws hammer a sandbox running short actions; every freeze must
// complete and every action finish.
func TestLiveFreezeDuringHibernation(t *testing.T) {
	b := idleSandbox(t, "freeze")
	const id = "freeze"
	stop := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := b.Pause(ctx, id)
			cancel()
			if err != nil {
				errs <- fmt.Errorf("freeze %d: %w", i, err)
				return
			}
			time.Sleep(time.Duration(i%3) * time.Millisecond)
			if err := b.Resume(context.Background(), id); err != nil {
				errs <- fmt.Errorf("thaw %d: %w", i, err)
				return
			}
			time.Sleep(time.Duration(i%5) * time.Millisecond)
		}
	}()
	for i := range 100 {
		if out := mustSh(t, b, id, fmt.Sprintf("echo %d", i)); out != fmt.Sprintf("%d\n", i) {
			t.Fatalf("action %d printed %q", i, out)
		}
	}
	close(stop)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}
