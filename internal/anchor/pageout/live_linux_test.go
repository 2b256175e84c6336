//go:build linux

package pageout

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/swap"
	"golang.org/x/sys/unix"
)

// liveSwap turns zram swap on for the test and off at cleanup, or skips
// naming what is missing.
func liveSwap(t *testing.T, size int64) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live page-out test needs root (swapon, cgroups, process_madvise)")
	}
	if fd, err := unix.PidfdOpen(os.Getpid(), 0); err != nil {
		t.Skipf("live page-out test needs pidfd_open/process_madvise: %v", err)
	} else {
		unix.Close(fd)
	}
	unlock, err := swap.Lock() // zram0 is shared with other packages' live tests
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
	st, err := swap.GetStatus()
	if err != nil {
		t.Fatalf("swap status: %v", err)
	}
	if !st.Present {
		t.Skip("live page-out test needs the zram module (/sys/block/zram0)")
	}
	if st.Active || st.DiskSize != 0 {
		t.Skipf("zram0 is already in use (active=%v disksize=%d): not touching it", st.Active, st.DiskSize)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	t.Cleanup(func() {
		if err := swap.Disable(context.Background()); err != nil {
			t.Errorf("cleanup: turning zram swap off: %v", err)
		}
	})
	if err := swap.Enable(context.Background(), size, log); err != nil {
		t.Fatalf("enabling zram swap: %v", err)
	}
}

// liveGroup creates a group with a freezer and removes it at cleanup.
func liveGroup(t *testing.T, suffix string) (*cgroup.Layout, cgroup.Group) {
	t.Helper()
	l, err := cgroup.Detect("/proc")
	if errors.Is(err, cgroup.ErrNoMemoryController) {
		t.Skip("live page-out test needs the memory controller (cgroup v1 or v2)")
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.Controllers[cgroup.Freezer]; !ok {
		t.Skip("live page-out test needs the freezer (v1 freezer or v2 cgroup.freeze)")
	}
	g, err := cgroup.Create(l, fmt.Sprintf("tenon-test-pageout-%d-%s", os.Getpid(), suffix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.KillAll(ctx); err != nil {
			t.Errorf("cleanup KillAll: %v", err)
		}
		if err := g.Delete(); err != nil {
			t.Errorf("cleanup Delete: %v", err)
		}
	})
	return l, g
}

// heapProc is a running heap child.
type heapProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

// startHeap starts a heap of mib MiB inside g.
func startHeap(t *testing.T, g cgroup.Group, mib int) *heapProc {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", heapEnv, mib))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &heapProc{t: t, cmd: cmd, in: in, lines: make(chan string, 64)}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	if err := g.AddProc(cmd.Process.Pid); err != nil {
		t.Fatalf("placing heap in %s: %v", g.Path(), err)
	}
	h.send("go")
	if l := h.next(60 * time.Second); !strings.HasPrefix(l, "heap ready") {
		t.Fatalf("heap did not start: %q", l)
	}
	return h
}

func (h *heapProc) send(line string) {
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatalf("writing to heap: %v", err)
	}
}

func (h *heapProc) next(timeout time.Duration) string {
	select {
	case l, ok := <-h.lines:
		if !ok {
			h.t.Fatal("heap exited")
		}
		return l
	case <-time.After(timeout):
		h.t.Fatal("no line from heap")
	}
	return ""
}

// verify asks for a full verification and returns the step it reports.
func (h *heapProc) verify() int {
	h.send("verify")
	l := h.next(60 * time.Second)
	var step int
	var sum string
	if _, err := fmt.Sscanf(l, "heap verify ok step=%d sum=%s", &step, &sum); err != nil {
		h.t.Fatalf("heap verification: %q", l)
	}
	return step
}

func zramStat(t *testing.T) swap.MMStat {
	st, err := swap.GetStatus()
	if err != nil || st.MM == nil {
		t.Fatalf("zram status: %v", err)
	}
	return *st.MM
}

// TestLivePageOutIn pages a 256 MiB heap out to zram and back in with each
// prefetch method, and proves the heap's content and progress survive.
func TestLivePageOutIn(t *testing.T) {
	liveSwap(t, 1<<30)
	_, g := liveGroup(t, "heap")
	const mib = 256
	h := startHeap(t, g, mib)
	pid := h.cmd.Process.Pid
	time.Sleep(200 * time.Millisecond) // a few steps
	last := h.verify()

	for _, method := range []Prefetch{PrefetchBoth, PrefetchWillNeed, PrefetchRead} {
		t.Run(method.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := g.Freeze(ctx); err != nil {
				t.Fatalf("Freeze: %v", err)
			}
			p := &Pager{Prefetch: method}
			out, err := p.PageOut(pid)
			if err != nil {
				g.Thaw(ctx)
				t.Fatalf("PageOut: %v", err)
			}
			zs := zramStat(t)
			in, err := p.PageIn(pid)
			if terr := g.Thaw(ctx); terr != nil {
				t.Fatalf("Thaw: %v", terr)
			}
			if err != nil {
				t.Fatalf("PageIn: %v", err)
			}
			t.Logf("page-out %v: %d ranges, RssAnon %d -> %d MiB, VmSwap %d MiB; zram orig %d MiB compr %d MiB used %d MiB",
				out.Duration, out.Ranges, out.Before.RssAnon>>20, out.After.RssAnon>>20, out.After.VmSwap>>20,
				zs.OrigDataSize>>20, zs.ComprDataSize>>20, zs.MemUsedTotal>>20)
			t.Logf("page-in (%v) %v: RssAnon %d -> %d MiB, VmSwap %d MiB, faulted %d MiB",
				method, in.Duration, in.Before.RssAnon>>20, in.After.RssAnon>>20, in.After.VmSwap>>20, in.Faulted>>20)

			if drop := out.Before.RssAnon - out.After.RssAnon; drop < mib<<20*8/10 {
				t.Errorf("page-out freed %d MiB of RssAnon, want at least 80%% of %d MiB", drop>>20, mib)
			}
			if method != PrefetchWillNeed && in.After.RssAnon < out.Before.RssAnon*8/10 {
				t.Errorf("page-in restored RssAnon to %d MiB, want at least 80%% of %d MiB", in.After.RssAnon>>20, out.Before.RssAnon>>20)
			}
			start := time.Now()
			step := h.verify()
			t.Logf("full verification after resume took %v", time.Since(start))
			time.Sleep(150 * time.Millisecond)
			if again := h.verify(); again <= step || step < last {
				t.Errorf("heap did not continue: steps %d, %d, %d", last, step, again)
			} else {
				last = again
			}
		})
	}
}
