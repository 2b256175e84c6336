package process

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

const (
	// outputGrace is how long the executor keeps reading an action's output
	// after its main process exited (background processes may hold the pipes).
	outputGrace = 100 * time.Millisecond
	// drainBound is how long past outputGrace it waits, at most, for its
	// readers to take what the pipes still hold (awaitOutput).
	drainBound = 2 * time.Second
)

// runExecutorChannel is the executor mode: it makes itself non-dumpable
// (so that no process of the sandbox, all of them without CAP_SYS_PTRACE,
// may ptrace it, open its /proc/1/fd entries or take its fds with
// pidfd_getfd) and serves the host on fd channelFd, which it marks
// close-on-exec so that no action inherits it.
//
// reexec is the command that runs this binary in the sandbox (os.Args[2:]
// as the host starts it: protocol.go's initArg); without it the executor
// cannot hibernate. woke says the idle loop started it: the host had its
// opReady long ago.
func runExecutorChannel(reexec []string, woke bool) int {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "tenon sandbox init: making init non-dumpable: %v\n", err)
		return 1
	}
	if _, err := unix.FcntlInt(channelFd, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		fmt.Fprintf(os.Stderr, "tenon sandbox init: no channel on fd %d: %v\n", channelFd, err)
		return 1
	}
	if err := defaultSIGCHLD(); err != nil {
		fmt.Fprintf(os.Stderr, "tenon sandbox init: resetting SIGCHLD: %v\n", err)
		return 1
	}
	prewarmThreads(executorThreads)
	ch := os.NewFile(channelFd, "tenon-channel")
	return runExecutor(heldReader{ch}, heldWriter{w: ch}, reexec, woke)
}

// executorThreads is how many OS threads the executor makes before it
// serves: the runtime keeps idle threads and reuses them, so an action
// that fills the sandbox's pids.max (a fork bomb) does not leave init
// unable to make the thread it needs, which would be fatal to it.
const executorThreads = 16

// prewarmThreads makes the runtime start n OS threads: n goroutines lock
// themselves to threads at the same time, then let them go idle.
func prewarmThreads(n int) {
	var ready, release sync.WaitGroup
	ready.Add(n)
	release.Add(1)
	for range n {
		go func() {
			runtime.LockOSThread()
			ready.Done()
			release.Wait()
			runtime.UnlockOSThread()
		}()
	}
	ready.Wait()
	release.Done()
}

// runExecutor is the sandbox init: it answers requests from in on out until
// in is closed. It returns the process exit code. reexec and woke are
// runExecutorChannel's.
func runExecutor(in io.Reader, out io.Writer, reexec []string, woke bool) int {
	e := &executor{
		reaper:  newReaper(),
		baseEnv: actionEnv(os.Environ()),
		reexec:  reexec,
		woke:    woke,
		out:     json.NewEncoder(out),
		lost:    exitLost,
	}
	if err := e.serve(in); err != nil {
		fmt.Fprintf(os.Stderr, "tenon sandbox init: %v\n", err)
		return 1
	}
	return 0
}

type executor struct {
	reaper  *reaper
	baseEnv []string
	// reexec runs this binary in the sandbox (nil: no hibernation);
	// woke: the idle loop started this executor (runExecutorChannel).
	reexec []string
	woke   bool

	mu      sync.Mutex
	out     *json.Encoder
	cancel  chan struct{} // non-nil while an action runs
	stopped bool
	gate    chan bool // non-nil while a Gate action runs; true opens, false aborts
	// lost is called when an action's result could not be sent: the
	// host would wait for it until the action's deadline, with the
	// sandbox idle and looking, to the OOM hold, like one resting at its
	// peak (exitLost).
	lost func(seq uint64, err error)
}

// exitLost ends the executor, and with it the sandbox, when a result
// could not be sent: the host sees the sandbox die at once and fails the
// attempt, where it would otherwise wait for the action's deadline
// (120 s of a held domain live, every wait under the OOM hold kept open
// by the idle sandbox meanwhile).
func exitLost(seq uint64, err error) {
	fmt.Fprintf(os.Stderr, "tenon sandbox init: the result of request %d could not be sent: %v\n", seq, err)
	os.Exit(1)
}

// gateScript blocks on fd 3 until the host has placed the shell in the
// action's scope, then execs the action with fd 3 closed; EOF without a
// line (the host aborted) exits 125 without running it.
const gateScript = `read -r _ <&3 || exit 125; exec "$@" 3<&-`

func (e *executor) send(r response) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.out.Encode(r)
}

func (e *executor) serve(in io.Reader) error {
	if !e.woke {
		if err := e.send(response{Op: opReady}); err != nil {
			return err
		}
	}
	dec := json.NewDecoder(in)
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("reading request: %w", err)
		}
		switch req.Op {
		case opExec:
			e.mu.Lock()
			busy := e.cancel != nil
			if !busy {
				e.cancel = make(chan struct{})
				e.stopped = false
				e.gate = nil
				if req.Gate {
					e.gate = make(chan bool, 1)
				}
			}
			cancel, gate := e.cancel, e.gate
			e.mu.Unlock()
			if busy {
				if err := e.send(response{Op: opResult, Seq: req.Seq, Nonce: req.Nonce, ExitCode: 127, Error: "an action is already running"}); err != nil {
					return err
				}
				continue
			}
			go func() {
				r := e.run(req, cancel, gate)
				r.Seq, r.Nonce = req.Seq, req.Nonce
				e.mu.Lock()
				e.cancel, e.gate = nil, nil
				e.mu.Unlock()
				if err := e.send(r); err != nil {
					e.lost(req.Seq, err)
				}
			}()
		case opOpen:
			e.mu.Lock()
			if e.gate != nil {
				select {
				case e.gate <- !req.Abort:
				default: // answered already
				}
			}
			e.mu.Unlock()
		case opCancel:
			e.mu.Lock()
			if e.cancel != nil && !e.stopped {
				close(e.cancel)
				e.stopped = true
			}
			e.mu.Unlock()
		case opHibernate:
			// On success this never returns: the idle loop runs.
			why := e.hibernate(dec.Buffered())
			if err := e.send(response{Op: opAwake, Seq: req.Seq, Error: why}); err != nil {
				return err
			}
		}
	}
}

// run executes one action and waits for it. A Gate action (gate non-nil)
// starts blocked on the trampoline; run announces it with opGate and lets
// it exec only once the host answers opOpen.
func (e *executor) run(req request, cancel <-chan struct{}, gate <-chan bool) response {
	env := mergeEnv(e.baseEnv, req.Env)
	argv := req.Argv
	if req.Shell != "" {
		argv = []string{"/bin/sh", "-c", req.Shell}
	}
	if len(argv) == 0 {
		return failed("empty command")
	}
	path, err := lookPath(argv[0], env)
	if err != nil {
		return failed(fmt.Sprintf("%s: %v", argv[0], err))
	}
	cwd := req.Cwd
	if cwd == "" {
		cwd = "/workspace"
	}
	limit := req.Limit
	if limit <= 0 {
		limit = sandbox.DefaultOutputLimit
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return failed(err.Error())
	}
	defer devnull.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		return failed(err.Error())
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return failed(err.Error())
	}
	defer errR.Close()

	files := []uintptr{devnull.Fd(), outW.Fd(), errW.Fd()}
	var gateR, gateW *os.File
	if gate != nil {
		if gateR, gateW, err = os.Pipe(); err != nil {
			outW.Close()
			errW.Close()
			return failed(err.Error())
		}
		defer gateW.Close()
		files = append(files, gateR.Fd())
		argv = append([]string{"/bin/sh", "-c", gateScript, "tenon-scope"}, argv...)
		path = "/bin/sh"
	}
	pid, wait, err := e.reaper.start(path, argv, &syscall.ProcAttr{
		Dir:   cwd,
		Env:   env,
		Files: files,
		Sys:   &syscall.SysProcAttr{Setpgid: true, Credential: req.User.sys()},
	})
	outW.Close()
	errW.Close()
	if gateR != nil {
		gateR.Close()
	}
	if err != nil {
		return failed(fmt.Sprintf("starting %s: %v", argv[0], err))
	}
	if gate != nil {
		e.openGate(req.Seq, req.Nonce, pid, gateW, gate, cancel)
	}

	stdout, stderr := &capture{limit: limit}, &capture{limit: limit}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); stdout.readAll(heldReader{outR}) }()
	go func() { defer wg.Done(); stderr.readAll(heldReader{errR}) }()

	var timeout <-chan time.Time
	if req.Timeout > 0 {
		t := time.NewTimer(time.Duration(req.Timeout))
		defer t.Stop()
		timeout = t.C
	}
	var ws syscall.WaitStatus
	r := response{Op: opResult}
	select {
	case ws = <-wait:
	case <-timeout:
		r.TimedOut = true
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		ws = <-wait
	case <-cancel:
		r.Canceled = true
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		ws = <-wait
	}

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	awaitOutput(done, outR, errR)

	switch {
	case ws.Exited():
		r.ExitCode = ws.ExitStatus()
	default:
		r.ExitCode = -1
	}
	r.Stdout, r.StdoutTruncated = stdout.buf, stdout.truncated
	r.Stderr, r.StderrTruncated = stderr.buf, stderr.truncated
	return r
}

// awaitOutput waits for an action's output readers (done closes when
// both have met the end of their pipes) for outputGrace after its main
// process exited, then closes the pipes so that a background process
// holding their write ends cannot keep the result back; but not while a
// pipe still holds output nobody read (FIONREAD), for up to drainBound
// more. Time frozen counts: a freeze of the sandbox (the gate's, or a
// page-out's) landing between the action's exit and the readers' last
// read ends the grace the moment it thaws, and closing then threw the
// output away (an `echo 89` returned exit 0 and no output in the v2 VM
// suite, its sandbox frozen and thawed every few milliseconds).
func awaitOutput(done <-chan struct{}, pipes ...*os.File) {
	t := time.NewTimer(outputGrace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	for deadline := time.Now().Add(drainBound); unread(pipes) && time.Now().Before(deadline); {
		select {
		case <-done:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
	for _, p := range pipes {
		p.Close()
	}
	<-done
}

// unread reports whether any of pipes holds bytes not read yet.
func unread(pipes []*os.File) bool {
	for _, p := range pipes {
		sc, err := p.SyscallConn()
		if err != nil {
			continue
		}
		n := 0
		_ = sc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }) // TIOCINQ is FIONREAD
		if n > 0 {
			return true
		}
	}
	return false
}

// sys is c as a process credential; nil keeps the executor's (root).
func (c *credential) sys() *syscall.Credential {
	if c == nil {
		return nil
	}
	return &syscall.Credential{Uid: c.Uid, Gid: c.Gid, Groups: c.Groups}
}

// openGate announces the gated process and waits for the host's answer:
// open writes the line the trampoline waits for, abort (or a cancel)
// closes the pipe so it exits 125 unstarted.
func (e *executor) openGate(seq uint64, nonce string, pid int, w *os.File, gate <-chan bool, cancel <-chan struct{}) {
	if err := e.send(response{Op: opGate, Seq: seq, Nonce: nonce, Pid: pid}); err != nil {
		w.Close()
		return
	}
	select {
	case open := <-gate:
		if open {
			_, _ = heldWriter{w: w}.Write([]byte("go\n"))
		}
	case <-cancel:
	}
	w.Close()
}

// failed is the result of an action that could not start: exit code 127
// and the reason on stderr, as a shell reports it.
func failed(msg string) response {
	return response{Op: opResult, ExitCode: 127, Stderr: []byte(msg + "\n"), Error: msg}
}

// reaper collects the exit status of every child (as pid 1, also of every
// orphan) and hands those of started actions to their waiters. It waits
// for children in a blocking waitid, not on SIGCHLD (heldio_linux.go;
// waitChild).
type reaper struct {
	mu      sync.Mutex
	waiters map[int]chan syscall.WaitStatus
	started chan struct{} // a child was started since the last ECHILD
}

func newReaper() *reaper {
	r := &reaper{waiters: make(map[int]chan syscall.WaitStatus), started: make(chan struct{}, 1)}
	go r.loop()
	return r
}

// start forks and execs under the reaper's lock, so the child cannot be
// reaped before its waiter is registered.
func (r *reaper) start(path string, argv []string, attr *syscall.ProcAttr) (int, <-chan syscall.WaitStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pid, err := syscall.ForkExec(path, argv, attr)
	if err != nil {
		return 0, nil, err
	}
	ch := make(chan syscall.WaitStatus, 1)
	r.waiters[pid] = ch
	select {
	case r.started <- struct{}{}:
	default:
	}
	return pid, ch, nil
}

// loop reaps children until there are none (ECHILD), then waits for the
// next start.
func (r *reaper) loop() {
	for range r.started {
		for {
			pid, ws, err := waitChild(unix.P_ALL, 0)
			if err != nil {
				break
			}
			r.mu.Lock()
			if ch, ok := r.waiters[pid]; ok {
				ch <- ws
				delete(r.waiters, pid)
			}
			r.mu.Unlock()
		}
	}
}

// childInfo is the kernel's siginfo_t as waitid fills it for a child
// (SIGCHLD's fields, 64-bit layout).
type childInfo struct {
	signo, errno, code, _ int32
	pid                   int32
	uid                   uint32
	status                int32
	_                     [100]byte
}

// waitChild waits for a child that exited (idType and id as waitid's:
// P_ALL, or P_PID and its pid), reaps it and returns its pid and status.
//
// It does not wait4: there the kernel reaps the child before it copies
// the status out, and when that copy fails (EFAULT: under the v1 OOM
// hold a kernel-mode fault on a paged-out page cannot charge memory,
// heldio_linux.go) the child is gone and its pid is not returned either,
// so the action's waiter waited for ever: the sandbox idle, no action
// process left, its result never sent. Here waitid first reads the
// child's pid and status without reaping it (WNOWAIT), retrying EFAULT
// after touching its buffer, then reaps that child with no buffer to
// copy to.
func waitChild(idType, id int) (int, syscall.WaitStatus, error) {
	var info childInfo
	for faults := 0; ; {
		err := waitid(idType, id, unsafe.Pointer(&info), unix.WEXITED|unix.WNOWAIT)
		if err == nil {
			break
		}
		if err == syscall.EFAULT && faults < heldRetries {
			faults++
			touchWrite(unsafe.Slice((*byte)(unsafe.Pointer(&info)), unsafe.Sizeof(info)))
			continue
		}
		if err != syscall.EINTR {
			return 0, 0, err
		}
	}
	pid := int(info.pid)
	for {
		err := waitid(unix.P_PID, pid, nil, unix.WEXITED)
		if err != syscall.EINTR {
			if err != nil {
				return 0, 0, fmt.Errorf("reaping %d: %w", pid, err)
			}
			break
		}
	}
	return pid, waitStatus(info.code, info.status), nil
}

// waitid is the raw system call; info may be nil (Linux then copies
// nothing out).
func waitid(idType, id int, info unsafe.Pointer, options int) error {
	_, _, errno := syscall.Syscall6(unix.SYS_WAITID, uintptr(idType), uintptr(id), uintptr(info), uintptr(options), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// waitStatus is the wait4 status of a child waitid reported with code
// and status (si_code, si_status).
func waitStatus(code, status int32) syscall.WaitStatus {
	const cldExited, cldDumped = 1, 3 // CLD_EXITED, CLD_DUMPED (CLD_KILLED is 2)
	switch code {
	case cldExited:
		return syscall.WaitStatus((status & 0xff) << 8)
	case cldDumped:
		return syscall.WaitStatus(status&0x7f | 0x80)
	default: // CLD_KILLED
		return syscall.WaitStatus(status & 0x7f)
	}
}

// hibernateChildWait bounds how long hibernate waits for the last
// action's processes (killed by the host after its result) to be reaped.
const hibernateChildWait = 200 * time.Millisecond

// hibernate execs the idle loop (idle_linux.go) in place of this
// executor, passing it the channel, when nothing needs the executor: no
// action runs, no request is pending (buffered, what the decoder read
// ahead) and init has no child left. The last condition is also what
// makes the exec safe: between execve and the idle loop's first
// instruction the kernel has made init dumpable again, and a process of
// the sandbox could take the channel through /proc/1/fd; with no other
// process in the sandbox's pid namespace, none can. It returns why the
// executor stays; on success it does not return.
func (e *executor) hibernate(buffered io.Reader) string {
	if !idleLoop {
		return "no idle loop in this build"
	}
	if len(e.reexec) == 0 {
		return "no command to exec the idle loop with"
	}
	e.mu.Lock()
	busy := e.cancel != nil
	e.mu.Unlock()
	if busy {
		return "an action runs"
	}
	if rest, _ := io.ReadAll(buffered); len(bytes.TrimSpace(rest)) > 0 {
		return "requests are pending"
	}
	for deadline := time.Now().Add(hibernateChildWait); hasChildren(); {
		if time.Now().After(deadline) {
			return "processes of the sandbox run"
		}
		time.Sleep(5 * time.Millisecond)
	}
	argv := slices.Concat(e.reexec, []string{idleArg}, e.reexec)
	// The channel must survive this one exec; nothing else forks now
	// (no action runs), and ForkLock keeps it so.
	syscall.ForkLock.Lock()
	defer syscall.ForkLock.Unlock()
	if _, err := unix.FcntlInt(channelFd, unix.F_SETFD, 0); err != nil {
		return fmt.Sprintf("keeping the channel open: %v", err)
	}
	err := syscall.Exec(argv[0], argv, os.Environ())
	_, _ = unix.FcntlInt(channelFd, unix.F_SETFD, unix.FD_CLOEXEC)
	return fmt.Sprintf("exec of the idle loop: %v", err)
}

// hasChildren reports whether init has a child, running or not yet
// reaped (waitid without reaping: ECHILD means none).
func hasChildren() bool {
	return waitid(unix.P_ALL, 0, nil, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT) != syscall.ECHILD
}
