//go:build linux

package suspend

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

	"github.com/tenon-dev/tenon/internal/anchor/broker"
	"github.com/tenon-dev/tenon/internal/anchor/pageout"
	"github.com/tenon-dev/tenon/internal/cgroup"
	"github.com/tenon-dev/tenon/internal/swap"
	"golang.org/x/sys/unix"
)

// TestLiveBrokerEndToEnd: a 128 MiB heap harness in a cgroup, a broker
// with a 200 ms grace and Watch. A model call longer than the grace gets
// the harness frozen and paged out; the reasoning end pages it in; the
// response thaws it and the heap verifies and continues. A model call of
// one agent while another runs a tool never pages out.
func TestLiveBrokerEndToEnd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("live suspension test needs root (swapon, cgroups, process_madvise)")
	}
	if fd, err := unix.PidfdOpen(os.Getpid(), 0); err != nil {
		t.Skipf("live suspension test needs pidfd_open/process_madvise: %v", err)
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
		t.Fatal(err)
	}
	if !st.Present {
		t.Skip("live suspension test needs the zram module (/sys/block/zram0)")
	}
	if st.Active || st.DiskSize != 0 {
		t.Skipf("zram0 is already in use (active=%v disksize=%d): not touching it", st.Active, st.DiskSize)
	}
	l, err := cgroup.Detect("/proc")
	if errors.Is(err, cgroup.ErrNoMemoryController) {
		t.Skip("live suspension test needs the memory controller (cgroup v1 or v2)")
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := l.Controllers[cgroup.Freezer]; !ok {
		t.Skip("live suspension test needs the freezer")
	}
	t.Cleanup(func() {
		if err := swap.Disable(context.Background()); err != nil {
			t.Errorf("cleanup: turning zram swap off: %v", err)
		}
	})
	if err := swap.Enable(context.Background(), 512<<20, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("enabling zram swap: %v", err)
	}
	g, err := cgroup.Create(l, fmt.Sprintf("tenon-test-suspend-%d", os.Getpid()))
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

	// The harness: a heap child placed in g before it allocates.
	self, _ := os.Executable()
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), heapEnv+"=128")
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(outPipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(60 * time.Second):
			t.Fatal("no line from the heap")
		}
		return ""
	}
	if err := g.AddProc(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	io.WriteString(in, "go\n")
	if l := next(); !strings.HasPrefix(l, "heap ready") {
		t.Fatalf("heap: %q", l)
	}
	verify := func() string {
		io.WriteString(in, "verify\n")
		l := next()
		if !strings.HasPrefix(l, "heap verify ok") {
			t.Fatalf("heap verification: %q", l)
		}
		return l
	}
	pager := &pageout.Pager{}
	rss := func() int64 {
		r, err := pager.Status(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		return r.RssAnon
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := broker.New(broker.Options{Grace: 200 * time.Millisecond})
	h := New(g, pager, slog.New(slog.DiscardHandler))
	suspended := make(chan Record, 4)
	go Watch(ctx, b, h, 20*time.Millisecond, func(r Record, err error) {
		if err != nil {
			t.Errorf("suspension: %v", err)
		}
		suspended <- r
	})
	apply := func(d broker.Decision) Record {
		rec, err := h.Apply(ctx, b, d)
		if err != nil {
			t.Fatalf("Apply(%v): %v", d.Action, err)
		}
		return rec
	}

	// A model call longer than the grace.
	before := rss()
	start := time.Now()
	b.ModelBegin("parent")
	var rec Record
	select {
	case rec = <-suspended:
	case <-time.After(10 * time.Second):
		t.Fatal("harness was not suspended during a long model call")
	}
	if since := time.Since(start); since < 200*time.Millisecond || !rec.Confirmed {
		t.Fatalf("suspension after %v, confirmed %v", since, rec.Confirmed)
	}
	paged := rss()
	t.Logf("suspend: freeze %v, page-out total %v, RssAnon %d -> %d MiB", rec.Freeze, rec.Total, before>>20, paged>>20)
	if paged > before/5 {
		t.Errorf("RssAnon %d MiB after suspension, want under a fifth of %d MiB", paged>>20, before>>20)
	}
	pre := apply(b.ReasoningEnd("parent"))
	res := apply(b.ModelEnd("parent"))
	after := rss()
	t.Logf("prefetch %v, resume (thaw) %v, RssAnon %d MiB", pre.Total, res.Total, after>>20)
	if pre.Action != broker.Prefetch || res.Action != broker.Resume || after < before*8/10 {
		t.Errorf("prefetch %v resume %v RssAnon %d MiB, want prefetch, resume and most of %d MiB back", pre.Action, res.Action, after>>20, before>>20)
	}
	v1 := verify()
	time.Sleep(150 * time.Millisecond)
	if v2 := verify(); v2 == v1 {
		t.Errorf("heap did not continue after resume: %q then %q", v1, v2)
	}

	// A tool in flight: never suspended, however long the other agent waits.
	b.ToolBegin("parent")
	b.ModelBegin("sub")
	time.Sleep(700 * time.Millisecond)
	if b.Suspended() || h.Suspensions() != 1 {
		t.Errorf("suspended with a tool call in flight (suspensions %d)", h.Suspensions())
	}
	if r := rss(); r < before*8/10 {
		t.Errorf("RssAnon %d MiB with a tool in flight, want it resident", r>>20)
	}
	b.ToolEnd("parent")
	b.AgentExit("parent")
	b.ModelEnd("sub")
	cancel()
}
