//go:build linux

package process

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// faultyRW fails its first faults calls (every call if faults < 0) with
// err, EFAULT when nil, as a system call does whose buffer the kernel
// could not fault in (EFAULT) or whose kernel memory it could not
// allocate (ENOBUFS, ENOMEM); a write may take part of the buffer first.
type faultyRW struct {
	faults  int
	partial int // bytes a failing write takes before it fails
	err     error
	in      *bytes.Reader
	out     bytes.Buffer
}

// fail reports whether this call fails, and with what.
func (f *faultyRW) fail() (bool, error) {
	if f.faults == 0 {
		return false, nil
	}
	f.faults--
	if f.err == nil {
		return true, syscall.EFAULT
	}
	return true, f.err
}

func (f *faultyRW) Read(p []byte) (int, error) {
	if bad, err := f.fail(); bad {
		return 0, err
	}
	return f.in.Read(p)
}

func (f *faultyRW) Write(p []byte) (int, error) {
	if bad, err := f.fail(); bad {
		n := min(f.partial, len(p))
		f.out.Write(p[:n])
		return n, err
	}
	return f.out.Write(p)
}

func TestHeldReaderRetriesEFAULT(t *testing.T) {
	f := &faultyRW{faults: 3, in: bytes.NewReader([]byte("request"))}
	buf := bytes.Repeat([]byte{'x'}, 3*pageSize+7)
	n, err := heldReader{f}.Read(buf)
	if err != nil || string(buf[:n]) != "request" {
		t.Fatalf("Read = %q, %v; want the data after three EFAULTs", buf[:n], err)
	}
	other := errors.New("closed")
	if _, err := (heldReader{errReader{other}}).Read(buf); err != other {
		t.Errorf("Read of a failing reader = %v, want its error unchanged", err)
	}
	f = &faultyRW{faults: heldRetries + 1, in: bytes.NewReader([]byte("x"))}
	if _, err := (heldReader{f}).Read(buf); !errors.Is(err, syscall.EFAULT) {
		t.Errorf("Read after %d EFAULTs = %v, want EFAULT (the retries are bounded)", heldRetries+1, err)
	}
}

func TestHeldWriterRetriesEFAULT(t *testing.T) {
	f := &faultyRW{faults: 2, partial: 3}
	n, err := heldWriter{w: f}.Write([]byte("result line\n"))
	if err != nil || n != 12 || f.out.String() != "result line\n" {
		t.Fatalf("Write = %d, %v, wrote %q; want every byte once after two partial EFAULTs", n, err, f.out.String())
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestHeldWriterWaitsForKernelMemory: a write refused for want of kernel
// memory is retried where it stopped, so the line arrives whole and once;
// a refusal that lasts is given up after heldWriteFor of waits; another
// error is returned at once.
func TestHeldWriterWaitsForKernelMemory(t *testing.T) {
	var slept time.Duration
	sleep := func(d time.Duration) { slept += d }
	f := &faultyRW{faults: 3, partial: 4, err: syscall.ENOBUFS}
	n, err := heldWriter{w: f, sleep: sleep}.Write([]byte("result line\n"))
	if err != nil || n != 12 || f.out.String() != "result line\n" {
		t.Fatalf("Write = %d, %v, wrote %q; want every byte once after three refusals", n, err, f.out.String())
	}
	f = &faultyRW{faults: -1, err: syscall.ENOMEM}
	slept = 0
	if _, err := (heldWriter{w: f, sleep: sleep}).Write([]byte("x\n")); !errors.Is(err, syscall.ENOMEM) || slept < heldWriteFor || slept > heldWriteFor+time.Second {
		t.Fatalf("a lasting refusal: %v after %v of waits, want ENOMEM after about %v", err, slept, heldWriteFor)
	}
	f = &faultyRW{faults: 1, err: syscall.EPIPE}
	slept = 0
	if _, err := (heldWriter{w: f, sleep: sleep}).Write([]byte("x\n")); !errors.Is(err, syscall.EPIPE) || slept != 0 {
		t.Fatalf("EPIPE: %v after %v of waits, want it at once", err, slept)
	}
}

// forkChild starts sh -c script as a child of the test process that Go
// does not wait for.
func forkChild(t *testing.T, script string) int {
	t.Helper()
	pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", script}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestWaitChildSurvivesEFAULT: wait4 reaps a child before it copies the
// status out, so an EFAULT there loses the child (the executor's action
// waiter waited for ever); waitChild peeks with WNOWAIT, and a peek that
// fails leaves the child to be waited for again.
func TestWaitChildSurvivesEFAULT(t *testing.T) {
	bad, err := unix.Mmap(-1, 0, pageSize, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(bad)
	badp := unsafe.Pointer(&bad[0])

	lost := forkChild(t, "exit 7")
	if _, _, errno := syscall.Syscall6(unix.SYS_WAIT4, uintptr(lost), uintptr(badp), 0, 0, 0, 0); errno != syscall.EFAULT {
		t.Fatalf("wait4 into an unreadable page = %v, want EFAULT", errno)
	}
	if _, err := syscall.Wait4(lost, nil, syscall.WNOHANG, nil); err != syscall.ECHILD {
		t.Fatalf("wait4 after its EFAULT = %v, want ECHILD (the child reaped and its status lost)", err)
	}

	for _, c := range []struct {
		script string
		check  func(syscall.WaitStatus) bool
	}{
		{"exit 7", func(ws syscall.WaitStatus) bool { return ws.Exited() && ws.ExitStatus() == 7 }},
		{"kill -9 $$", func(ws syscall.WaitStatus) bool { return ws.Signaled() && ws.Signal() == syscall.SIGKILL }},
	} {
		pid := forkChild(t, c.script)
		if err := waitid(unix.P_PID, pid, badp, unix.WEXITED|unix.WNOWAIT); err != syscall.EFAULT {
			t.Fatalf("%s: waitid into an unreadable page = %v, want EFAULT", c.script, err)
		}
		got, ws, err := waitChild(unix.P_PID, pid)
		if err != nil || got != pid || !c.check(ws) {
			t.Errorf("%s: waitChild after a failed peek = %d, %#x (exited %v code %d, signal %v), %v; want %d",
				c.script, got, uint32(ws), ws.Exited(), ws.ExitStatus(), ws.Signal(), err, pid)
		}
		if _, err := syscall.Wait4(pid, nil, syscall.WNOHANG, nil); err != syscall.ECHILD {
			t.Errorf("%s: the child is still there after waitChild: %v", c.script, err)
		}
	}
}
