package anchortest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/anchor/heap"
	"github.com/tenon-dev/tenon/internal/cgroup"
)

// RunHeapChild makes the test binary a heap process when the environment
// variable env holds a size in MiB: it waits for one line on stdin (so
// StartHeap can place it in a cgroup first), runs the heap on stdin and
// stdout and exits. Otherwise it returns. Call it first in TestMain.
func RunHeapChild(env string) {
	v := os.Getenv(env)
	if v == "" {
		return
	}
	mib, err := strconv.Atoi(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil {
		os.Exit(2)
	}
	err = heap.RunHeap(context.Background(), heap.HeapOptions{
		SizeMiB: mib, TouchPercent: 20, Step: 50 * time.Millisecond,
		RandomPerPage: 1024, In: in, Out: os.Stdout, Signals: true,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Heap is a running heap child of the test binary.
type Heap struct {
	Cmd   *exec.Cmd
	t     testing.TB
	in    io.WriteCloser
	lines chan string
}

// StartHeap starts the test binary as a heap of mib MiB (env is the
// variable its TestMain passes to RunHeapChild), places it in g before it
// allocates and waits until it is ready. The child is killed at cleanup.
func StartHeap(t testing.TB, g cgroup.Group, env string, mib int) *Heap {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", env, mib))
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
	h := &Heap{Cmd: cmd, t: t, in: in, lines: make(chan string, 64)}
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
	h.Send("go")
	if l := h.Next(60 * time.Second); !strings.HasPrefix(l, "heap ready") {
		t.Fatalf("heap did not start: %q", l)
	}
	return h
}

// Pid is the heap's process id.
func (h *Heap) Pid() int { return h.Cmd.Process.Pid }

// Send writes one command line to the heap.
func (h *Heap) Send(line string) {
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatalf("writing to heap: %v", err)
	}
}

// Next returns the heap's next output line; it fails the test when the
// heap exits or says nothing for timeout.
func (h *Heap) Next(timeout time.Duration) string {
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

// Verify asks for a full verification and returns the step the heap
// reports; it fails the test when the heap's content does not verify.
func (h *Heap) Verify() int {
	h.Send("verify")
	l := h.Next(60 * time.Second)
	var step int
	var sum string
	if _, err := fmt.Sscanf(l, "heap verify ok step=%d sum=%s", &step, &sum); err != nil {
		h.t.Fatalf("heap verification: %q", l)
	}
	return step
}
