package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWriteFileEAGAIN: a write the kernel answers with EAGAIN returns it
// (dropMemory retries memory.reclaim on it) instead of waiting in Go's
// poller for a pollable file to become writable. A full FIFO opened
// O_NONBLOCK answers EAGAIN as memory.reclaim does; through an *os.File
// this write never returned.
func TestWriteFileEAGAIN(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	r, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan error, 1)
	go func() { done <- writeFileFlags(p, strings.Repeat("x", 4<<20), syscall.O_NONBLOCK) }()
	select {
	case err := <-done:
		if !errors.Is(err, syscall.EAGAIN) {
			t.Errorf("writing 4 MiB to a FIFO nobody reads: %v, want EAGAIN", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write answered EAGAIN did not return")
	}
}
