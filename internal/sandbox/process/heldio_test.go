//go:build linux

package process

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
	"time"
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
