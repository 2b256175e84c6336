//go:build linux

package memtool

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// startHolder runs the shared holder of dir in this process, holding
// peak MiB, until the test ends, and waits until it listens; it returns
// its arena, read after hand-offs answered.
func startHolder(t *testing.T, dir string, peak float64) *arena {
	t.Helper()
	ar := serveLater(t, dir, peak, 0)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if c, err := net.Dial("unix", filepath.Join(dir, holderSocket)); err == nil {
			c.Close()
			return ar
		}
		if time.Now().After(deadline) {
			t.Fatalf("holder of %s never listened", dir)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// serveLater starts, after delay, the shared holder of dir in this
// process, holding peak MiB, until the test ends; it returns at once.
func serveLater(t *testing.T, dir string, peak float64, delay time.Duration) *arena {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ar := newArena()
	o := Options{Profile: trajectory.MemProfile{PeakMiB: peak}, HolderDir: dir, Serve: true, NoSignals: true}
	o.defaults()
	done := make(chan error, 1)
	go func() {
		time.Sleep(delay)
		_, err := serveHolder(ctx, o, ar)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err == nil {
			t.Errorf("holder ended without an error after its context")
		}
		ar.Free()
	})
	return ar
}

// TestBackgroundSharesHolder: with no holder a background run starts one
// (the serve arguments) and returns only once it answers, so the next run
// hands off to it even when the holder is slow to start; with one
// listening a run hands its retained memory over and starts nothing.
func TestBackgroundSharesHolder(t *testing.T) {
	dir := t.TempDir()
	var spawned [][]string
	var ar *arena
	o := Options{
		Profile:   trajectory.MemProfile{PeakMiB: 4, RetainMiB: 3, Background: true},
		HolderDir: dir,
		Spawn: func(args []string) (int, error) {
			spawned = append(spawned, args)
			if slices.Contains(args, "--serve-holder") {
				ar = serveLater(t, dir, 2, 300*time.Millisecond)
			}
			return 7, nil
		},
	}
	pid, err := background(context.Background(), o)
	want := []string{"tool", "mem", "--peak", "3MiB", "--ramp", "0s", "--hold", "forever", "--holder-dir", dir, "--serve-holder"}
	if err != nil || pid != 7 || len(spawned) != 1 || !slices.Equal(spawned[0], want) {
		t.Fatalf("without a holder: pid %d, %v, spawned %q; want pid 7 and %q", pid, err, spawned, want)
	}

	for i := 1; i <= 2; i++ {
		pid, err = background(context.Background(), o)
		if err != nil || pid != os.Getpid() || len(spawned) != 1 {
			t.Fatalf("hand-off %d: pid %d, %v, spawned %d; want the holder's pid %d and no spawn", i, pid, err, len(spawned), os.Getpid())
		}
		if want := (2 + 3*int64(i)) * units.MiB; ar.Size() != want {
			t.Fatalf("after hand-off %d the holder holds %s, want %s", i, units.FormatSize(ar.Size()), units.FormatSize(want))
		}
	}

	o.BackgroundFor = time.Minute // a limited life is its own process's
	if _, err := background(context.Background(), o); err != nil || len(spawned) != 2 || slices.Contains(spawned[1], "--serve-holder") {
		t.Fatalf("with background-for: %v, spawned %q; want a plain holder", err, spawned)
	}
}

// TestHolderReplacesStaleSocket: a socket file nobody listens on (a
// killed holder's) is replaced; a holder that answers is left alone.
func TestHolderReplacesStaleSocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, holderSocket)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close() // the file stays, nobody listens
	if _, ok, err := handOff(context.Background(), dir, units.MiB); ok || err != nil {
		t.Fatalf("hand-off to a stale socket: ok %v, %v; want not ok and no error", ok, err)
	}
	ar := startHolder(t, dir, 1)
	if l2, err := listenHolder(dir); l2 != nil || err != nil {
		t.Fatalf("second holder: listener %v, %v; want none (the first serves)", l2, err)
	}
	if _, ok, err := handOff(context.Background(), dir, units.MiB); !ok || err != nil || ar.Size() != 2*units.MiB {
		t.Fatalf("hand-off: ok %v, %v, holder holds %s; want 2 MiB", ok, err, units.FormatSize(ar.Size()))
	}
}

// TestHolderRejectsBadHandOff: a malformed or oversized request gets an
// error line and changes nothing; a ping is answered and holds nothing.
func TestHolderRejectsBadHandOff(t *testing.T) {
	dir := t.TempDir()
	ar := startHolder(t, dir, 1)
	for _, req := range []string{"hold -5\n", "hold 99999999999999999\n", "grow 1\n", "hold\n"} {
		c, err := net.Dial("unix", filepath.Join(dir, holderSocket))
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(req))
		buf := make([]byte, 200)
		n, _ := c.Read(buf)
		c.Close()
		if !strings.HasPrefix(string(buf[:n]), "error ") {
			t.Errorf("request %q answered %q, want an error", req, buf[:n])
		}
	}
	if pid, ok, err := ask(context.Background(), dir, "ping\n"); !ok || err != nil || pid != os.Getpid() {
		t.Errorf("ping: pid %d, ok %v, %v; want the holder's pid %d", pid, ok, err, os.Getpid())
	}
	if ar.Size() != units.MiB {
		t.Fatalf("holder holds %s after bad requests and a ping, want 1 MiB", units.FormatSize(ar.Size()))
	}
}
