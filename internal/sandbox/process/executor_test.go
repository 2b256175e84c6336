//go:build linux

package process

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startExecutor runs the test binary in executor mode as a plain child
// process (no container: kills reach the action's process group only).
func startExecutor(t *testing.T) (*json.Encoder, *json.Decoder) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, initArg)
	cmd.Env = append(os.Environ(), "EXECUTOR_TEST=1")
	cmd.Dir = t.TempDir()
	cmd.Stderr = os.Stderr
	hostEnd, initEnd, err := channelPair()
	if err != nil {
		t.Fatal(err)
	}
	cmd.ExtraFiles = []*os.File{initEnd} // fd channelFd
	err = cmd.Start()
	initEnd.Close()
	if err != nil {
		hostEnd.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		hostEnd.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Error("executor did not exit when its channel closed")
		}
	})
	in, out := hostEnd, hostEnd
	dec := json.NewDecoder(bufio.NewReader(out))
	var ready response
	if err := dec.Decode(&ready); err != nil || ready.Op != opReady {
		t.Fatalf("first message %+v %v, want ready", ready, err)
	}
	return json.NewEncoder(in), dec
}

func TestExecutorProtocol(t *testing.T) {
	enc, dec := startExecutor(t)
	cwd := t.TempDir()
	t.Cleanup(func() { // the background sleep: not in a container, nobody else kills it
		if b, err := os.ReadFile(filepath.Join(cwd, "pgid")); err == nil {
			if pgid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pgid > 1 {
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			}
		}
	})
	tests := []struct {
		name  string
		req   request
		check func(r response) bool
	}{
		{"argv and env", request{Argv: []string{"sh", "-c", "echo $EXECUTOR_TEST $X"}, Env: []string{"X=y"}, Cwd: cwd},
			func(r response) bool { return r.ExitCode == 0 && string(r.Stdout) == "1 y\n" }},
		{"cwd", request{Shell: "pwd", Cwd: cwd},
			func(r response) bool { return string(r.Stdout) == cwd+"\n" }},
		{"exit and stderr", request{Shell: "echo e >&2; exit 4", Cwd: cwd},
			func(r response) bool { return r.ExitCode == 4 && string(r.Stderr) == "e\n" }},
		{"cap", request{Shell: "head -c 5000 /dev/zero", Cwd: cwd, Limit: 100},
			func(r response) bool { return len(r.Stdout) == 100 && r.StdoutTruncated }},
		{"timeout", request{Shell: "sleep 30", Cwd: cwd, Timeout: int64(100 * time.Millisecond)},
			func(r response) bool { return r.TimedOut && r.ExitCode == -1 }},
		{"missing program", request{Argv: []string{"tenon-no-such-program"}, Cwd: cwd},
			func(r response) bool { return r.ExitCode == 127 && r.Error != "" }},
		{"bad cwd", request{Shell: "true", Cwd: "/no/such/dir"},
			func(r response) bool { return r.ExitCode == 127 && r.Error != "" }},
		// A background process keeping stdout open does not hold the result.
		{"background holds stdout", request{Shell: "echo $$ > pgid; sleep 30 & echo started", Cwd: cwd},
			func(r response) bool { return r.ExitCode == 0 && string(r.Stdout) == "started\n" }},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Op, tt.req.Seq = opExec, uint64(i+1)
			start := time.Now()
			if err := enc.Encode(tt.req); err != nil {
				t.Fatal(err)
			}
			var r response
			if err := dec.Decode(&r); err != nil {
				t.Fatal(err)
			}
			if r.Op != opResult || r.Seq != tt.req.Seq || !tt.check(r) {
				t.Fatalf("result %+v (stdout %q stderr %q)", r, r.Stdout, r.Stderr)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Fatalf("took %v", el)
			}
		})
	}
}

func TestExecutorCancelAndBusy(t *testing.T) {
	enc, dec := startExecutor(t)
	send := func(r request) {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() response {
		var r response
		if err := dec.Decode(&r); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		return r
	}
	send(request{Op: opExec, Seq: 1, Shell: "sleep 30", Cwd: "/"})
	send(request{Op: opExec, Seq: 2, Shell: "true", Cwd: "/"})
	if r := recv(); r.Seq != 2 || r.Error == "" {
		t.Fatalf("second exec while busy: %+v, want a busy error", r)
	}
	send(request{Op: opCancel})
	if r := recv(); r.Seq != 1 || !r.Canceled || r.ExitCode != -1 {
		t.Fatalf("canceled exec: %+v", r)
	}
}

// failAfter accepts its first ok writes, then fails every write with err.
type failAfter struct {
	ok  int
	err error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.ok > 0 {
		f.ok--
		return len(p), nil
	}
	return 0, f.err
}

// TestExecutorLostResult: a result the executor cannot send is not
// dropped silently (the host would wait for it until the action's
// deadline): the executor's lost hook, which ends the sandbox, gets it.
func TestExecutorLostResult(t *testing.T) {
	inR, inW := io.Pipe()
	lost := make(chan uint64, 1)
	e := &executor{reaper: newReaper(), out: json.NewEncoder(&failAfter{ok: 1, err: syscall.EPIPE}),
		lost: func(seq uint64, err error) {
			if errors.Is(err, syscall.EPIPE) {
				lost <- seq
			}
		}}
	done := make(chan error, 1)
	go func() { done <- e.serve(inR) }()
	if err := json.NewEncoder(inW).Encode(request{Op: opExec, Seq: 7}); err != nil { // an empty command: fails before any process starts
		t.Fatal(err)
	}
	select {
	case seq := <-lost:
		if seq != 7 {
			t.Fatalf("lost the result of request %d, want 7", seq)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the unsendable result was dropped silently")
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// TestAwaitOutputKeepsUnreadOutput: an action's output still in its pipe
// when the grace after its exit ran out (its readers had not run: the
// sandbox was frozen then) is read, not thrown away; a pipe that a
// background process holds open with nothing in it is closed after the
// grace, so that the result is not held back.
func TestAwaitOutputKeepsUnreadOutput(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("89\n")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	out := &capture{limit: 1 << 10}
	release, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		<-release // frozen until after the grace
		out.readAll(heldReader{r})
	}()
	go func() {
		time.Sleep(3 * outputGrace)
		close(release)
	}()
	awaitOutput(done, r)
	if string(out.buf) != "89\n" {
		t.Fatalf("output %q after a late reader, want %q", out.buf, "89\n")
	}

	// A background process's pipe: open, empty. awaitOutput closes it and
	// the reader returns.
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	done2 := make(chan struct{})
	go func() { defer close(done2); (&capture{limit: 1 << 10}).readAll(heldReader{r2}) }()
	awaitOutput(done2, r2)
}
