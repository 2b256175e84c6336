package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/api"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "top", summary: "live view of the daemon: pressure, budget bar, agents", run: runTop})
}

func runTop(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "top", "", "Show a live view of a running tenon daemon; q or Ctrl-C exits.", "")
	cf := addClientFlags(fs)
	once := fs.Bool("once", false, "print one frame and exit")
	every := fs.Duration("interval", time.Second, "refresh interval")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	c := cf.client()
	defer c.Close()
	if *once {
		st, err := c.Status(ctx)
		if err != nil {
			return cf.explain(err)
		}
		drawTop(env.stdout, st, false)
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if restore := rawTerminal(int(os.Stdin.Fd())); restore != nil {
		defer restore()
	}
	go func() { // q quits
		b := make([]byte, 1)
		for {
			n, err := os.Stdin.Read(b)
			if err != nil || n == 1 && (b[0] == 'q' || b[0] == 3) {
				cancel()
				return
			}
		}
	}()
	fmt.Fprint(env.stdout, "\x1b[?25l")
	defer fmt.Fprint(env.stdout, "\x1b[?25h\n")
	t := time.NewTicker(*every)
	defer t.Stop()
	for {
		st, err := c.Status(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return cf.explain(err)
		}
		drawTop(env.stdout, st, true)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// drawTop prints one frame; clear homes the cursor and clears the screen first.
func drawTop(w io.Writer, st api.Status, clear bool) {
	if clear {
		fmt.Fprint(w, "\x1b[H\x1b[2J")
	}
	color := map[string]string{api.PressureGreen: "\x1b[32m", api.PressureYellow: "\x1b[33m", api.PressureRed: "\x1b[31m"}[st.Pressure]
	fmt.Fprintf(w, "tenon top  %s  pressure %s%s\x1b[0m\n", time.Now().Format("15:04:05"), color, st.Pressure)
	fmt.Fprintf(w, "budget %s %s / %s\n\n", budgetBar(st.UsageBytes, st.BudgetBytes, 40), units.FormatSize(st.UsageBytes), units.FormatSize(st.BudgetBytes))
	printStatus(w, st)
	if clear {
		fmt.Fprint(w, "\npress q to quit")
	}
}

// rawTerminal turns off line buffering and echo on fd; it returns the
// restore function, or nil when fd is not a terminal.
func rawTerminal(fd int) func() {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil
	}
	raw := *old
	raw.Lflag &^= unix.ICANON | unix.ECHO
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return nil
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, old) }
}
