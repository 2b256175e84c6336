package memtool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tenon-dev/tenon/internal/units"
)

// The shared holder keeps, in one process per sandbox, the retained memory
// of every action that leaves a background process holding it forever
// (Profile.Background without BackgroundFor): the first such action starts
// it, and each later one hands its retained bytes to it over a unix socket
// in HolderDir instead of starting a process of its own.
//
// Why: each holder is the tenon binary run again, and a Go process of
// that binary holds about 3 MiB of its own (the runtime and its packages'
// state) beside what it holds for the profile. The generated swe-real
// workload leaves a 1-2 MiB holder after about one action in four (six
// per workflow); live, a sandbox with five of them held 35 MiB where the
// trace's actions retained 6: in a live replay of swe-real at 1 GiB (seed
// 1) 25 idle sandboxes held 684 MiB, where the simulator, which counts
// only what the profiles retain, had them at about 250 MiB. Idle floors
// decide admission and the OOM hold's preemptions on the real traces, so
// the replay's own overhead made every live run tighter than the traces
// it replays. One holder per sandbox pays the overhead once, and it counts
// toward what it holds (CountOwn, on in the tenon CLI by default).
//
// The run that starts the holder returns only once the holder answers on
// its socket (or holderStartWait has passed): the sandbox's next action,
// which may start at once, then hands off to it instead of starting a
// second holder. The holder listens before it maps what it holds and
// answers a ping once that is mapped, as the run's own retain would be.
//
// A holder that cannot listen (another one raced it to the socket, or the
// directory cannot be made) holds its memory all the same, alone, as
// before. The socket lives in the sandbox's own /tmp (DefaultHolderDir):
// only the sandbox's processes reach it, and nothing of it outlives the
// sandbox.

// DefaultHolderDir is where Args puts the shared holder's socket: the
// sandbox's own /tmp.
const DefaultHolderDir = "/tmp/.tenon-mem"

// holderSocket is the socket's name in HolderDir.
const holderSocket = "holder.sock"

// maxHandOff bounds one hand-off: more than any sandbox holds, so a
// corrupt request cannot make the holder map without end.
const maxHandOff = 1 << 40

// holderStartWait bounds how long the run that started a holder waits for
// it to answer: far more than a Go process takes to start, and only paid
// when the holder cannot listen (it then holds alone).
const holderStartWait = 5 * time.Second

// handOff asks the shared holder listening in dir to hold n more bytes and
// returns its pid once it holds them. ok is false when no holder answers
// (none runs, or a stale socket): the caller starts one.
func handOff(ctx context.Context, dir string, n int64) (pid int, ok bool, err error) {
	return ask(ctx, dir, fmt.Sprintf("hold %d\n", n))
}

// awaitHolder waits until a holder answers a ping in dir, ctx ends or
// holderStartWait passes, whichever comes first.
func awaitHolder(ctx context.Context, dir string) {
	ctx, cancel := context.WithTimeout(ctx, holderStartWait)
	defer cancel()
	for {
		if _, ok, _ := ask(ctx, dir, "ping\n"); ok {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// ask sends one request to the holder in dir and reads its "ok PID" answer.
func ask(ctx context.Context, dir, req string) (pid int, ok bool, err error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", filepath.Join(dir, holderSocket))
	if err != nil {
		return 0, false, nil
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := io.WriteString(conn, req); err != nil {
		return 0, false, nil // it went away: start another
	}
	// The holder answers once the pages are resident; at the cgroup's
	// limit that waits as the tool's own allocation would.
	line, err := bufio.NewReader(conn).ReadString('\n')
	if ctx.Err() != nil {
		return 0, false, context.Cause(ctx)
	}
	f := strings.Fields(line)
	if err != nil || len(f) != 2 || f[0] != "ok" {
		if len(f) > 0 && f[0] == "error" {
			return 0, false, fmt.Errorf("shared holder: %s", strings.TrimSpace(strings.TrimPrefix(line, "error")))
		}
		return 0, false, nil
	}
	pid, err = strconv.Atoi(f[1])
	if err != nil {
		return 0, false, nil
	}
	return pid, true, nil
}

// listenHolder makes dir and listens on its socket, replacing a stale one
// (no holder answers there). It returns nil when another holder answers:
// this one then holds its memory alone.
func listenHolder(dir string) (*net.UnixListener, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making holder directory: %w", err)
	}
	addr := &net.UnixAddr{Name: filepath.Join(dir, holderSocket), Net: "unix"}
	l, err := net.ListenUnix("unix", addr)
	if err == nil {
		return l, nil
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("listening for hand-offs: %w", err)
	}
	if c, derr := net.DialTimeout("unix", addr.Name, time.Second); derr == nil {
		c.Close()
		return nil, nil // another holder serves
	}
	if err := os.Remove(addr.Name); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("removing stale holder socket: %w", err)
	}
	l, err = net.ListenUnix("unix", addr)
	if err != nil {
		return nil, fmt.Errorf("listening for hand-offs: %w", err)
	}
	return l, nil
}

// serveHolder is the shared holder's main loop: it holds the profile's
// retained memory (its peak: backgroundProfile) and, on each hand-off, n
// bytes more, until ctx ends; then it frees everything. Without a
// listener (another holder serves, or listening failed) it only holds.
// It listens first, so the run that started it can return (awaitHolder)
// while it maps; requests wait in the socket's backlog meanwhile.
func serveHolder(ctx context.Context, o Options, ar *arena) (Result, error) {
	l, lerr := listenHolder(o.HolderDir)
	if lerr != nil {
		fmt.Fprintln(o.Out, "mem: holding alone:", lerr)
	}
	if l != nil {
		defer l.Close()
	}
	held := mib(o.Profile.PeakMiB)
	if err := ar.Resize(held - o.own); err != nil {
		return Result{}, err
	}
	res := Result{Peak: ar.Size() + o.own, Retained: ar.Size() + o.own}
	if l == nil {
		<-ctx.Done()
		return res, context.Cause(ctx)
	}
	stop := context.AfterFunc(ctx, func() { _ = l.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	for {
		conn, err := l.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				return res, context.Cause(ctx)
			}
			return res, fmt.Errorf("accepting hand-offs: %w", err)
		}
		n, err := readHandOff(conn)
		if err == nil && n > 0 {
			err = ar.Resize(held + n - o.own)
		}
		if err != nil {
			fmt.Fprintf(conn, "error %v\n", err)
			conn.Close()
			continue
		}
		held += n
		res.Peak, res.Retained = max(res.Peak, ar.Size()+o.own), ar.Size()+o.own
		fmt.Fprintf(conn, "ok %d\n", os.Getpid())
		conn.Close()
	}
}

// readHandOff reads one request within a second: "hold N\n", or "ping\n"
// (returned as 0: answer without holding more).
func readHandOff(conn *net.UnixConn) (int64, error) {
	_ = conn.SetReadDeadline(time.Now().Add(time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("reading hand-off: %w", err)
	}
	f := strings.Fields(line)
	if len(f) == 1 && f[0] == "ping" {
		return 0, nil
	}
	if len(f) != 2 || f[0] != "hold" {
		return 0, fmt.Errorf("bad hand-off %q: want \"hold BYTES\" or \"ping\"", strings.TrimSpace(line))
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || n <= 0 || n > maxHandOff {
		return 0, fmt.Errorf("bad hand-off size %q: want 1 to %s", f[1], units.FormatSize(maxHandOff))
	}
	return n, nil
}
