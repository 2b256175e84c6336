package heap

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestHeapDeterministicAndVerifies(t *testing.T) {
	tests := []struct {
		name  string
		opts  HeapOptions
		steps int
	}{
		{"incompressible", HeapOptions{SizeMiB: 4, TouchPercent: 50, Seed: 1}, 3},
		{"quarter random", HeapOptions{SizeMiB: 3, TouchPercent: 20, Seed: 2, RandomPerPage: 1024}, 5},
		{"touch all", HeapOptions{SizeMiB: 2, TouchPercent: 100, Seed: 3}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := New(tt.opts), New(tt.opts)
			if a.Sum() != b.Sum() {
				t.Fatal("same options, different sums")
			}
			start := a.Sum()
			for range tt.steps {
				if err := a.Step(); err != nil {
					t.Fatal(err)
				}
				if err := b.Step(); err != nil {
					t.Fatal(err)
				}
			}
			sa, err := a.Verify()
			if err != nil {
				t.Fatal(err)
			}
			if sa != b.Sum() || sa == start {
				t.Errorf("sum after steps %x (other %x, start %x): want equal to the other and changed", sa, b.Sum(), start)
			}
			other := tt.opts
			other.Seed++
			if New(other).Sum() == start {
				t.Error("a different seed gave the same sum")
			}
		})
	}
}

func TestHeapDetectsCorruption(t *testing.T) {
	h := New(HeapOptions{SizeMiB: 2, TouchPercent: 50})
	h.mem[chunkSize+123] ^= 0xff
	if _, err := h.Verify(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Verify after a flipped byte: %v, want ErrCorrupt", err)
	}
	// The touch window reaches chunk 1 on the second step.
	if err := h.Step(); err != nil {
		t.Fatalf("first step (chunk 0) = %v", err)
	}
	if err := h.Step(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("second step = %v, want ErrCorrupt", err)
	}
}

func TestHeapCompressible(t *testing.T) {
	h := New(HeapOptions{SizeMiB: 1, RandomPerPage: 1024})
	zeros := bytes.Count(h.mem, []byte{0})
	if zeros < 3*len(h.mem)/4-len(h.mem)/100 {
		t.Errorf("%d zero bytes of %d, want about three quarters", zeros, len(h.mem))
	}
}

// lineWriter delivers each output line on a channel.
type lineWriter struct{ lines chan string }

func (w lineWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimSpace(string(p)), "\n") {
		w.lines <- l
	}
	return len(p), nil
}

func TestRunHeapVerifiesOnRequest(t *testing.T) {
	inR, inW := io.Pipe()
	out := lineWriter{make(chan string, 16)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunHeap(ctx, HeapOptions{SizeMiB: 2, Step: time.Millisecond, In: inR, Out: out})
	}()
	next := func() string {
		select {
		case l := <-out.lines:
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no output from RunHeap")
			return ""
		}
	}
	if l := next(); !strings.HasPrefix(l, "heap ready mib=2 chunks=2 sum=") {
		t.Fatalf("first line %q", l)
	}
	inW.Write([]byte("verify\n"))
	if l := next(); !strings.HasPrefix(l, "heap verify ok step=") {
		t.Fatalf("verify line %q", l)
	}
	cancel()
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("RunHeap: %v", err)
	}
}

func TestRunHeapSteps(t *testing.T) {
	var out bytes.Buffer
	if err := RunHeap(context.Background(), HeapOptions{SizeMiB: 2, Steps: 3, Step: time.Millisecond, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "heap verify ok step=3 ") {
		t.Errorf("output %q", out.String())
	}
}
