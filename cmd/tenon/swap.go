package main

import (
	"context"
	"fmt"

	"github.com/tenon-dev/tenon/internal/swap"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "swap enable", summary: "set up zram swap (needed to page out waiting harnesses)", run: runSwapEnable})
	register(&command{name: "swap disable", summary: "turn off and reset tenon's zram swap", run: runSwapDisable})
	register(&command{name: "swap status", summary: "show zram and swap state", run: runSwapStatus})
}

func runSwapEnable(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "swap enable", "", "Set up compressed swap in RAM on /dev/zram0.",
		`Refuses when zram0 is already someone else's swap. Turn it off with 'tenon swap disable'.`)
	size := units.Size(4 * units.GiB)
	fs.Var(&size, "size", "swap size (uncompressed), e.g. 4GiB")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if size <= 0 {
		return fmt.Errorf("--size must be positive")
	}
	if err := swap.Enable(ctx, int64(size), env.log); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "zram swap of %s enabled on /dev/zram0\n", units.FormatSize(int64(size)))
	return nil
}

func runSwapDisable(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "swap disable", "", "Turn off and reset tenon's zram swap device.", "")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	if err := swap.Disable(ctx); err != nil {
		return err
	}
	fmt.Fprintln(env.stdout, "zram swap disabled")
	return nil
}

func runSwapStatus(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "swap status", "", "Show the zram device and every active swap area.", "")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	st, err := swap.GetStatus()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "zram0: present=%v active=%v tenon=%v disksize=%s algorithm=%s\n",
		st.Present, st.Active, st.Ours, units.FormatSize(st.DiskSize), st.Algorithm)
	if len(st.Swaps) == 0 {
		fmt.Fprintln(env.stdout, "no active swap")
	}
	for _, s := range st.Swaps {
		fmt.Fprintf(env.stdout, "%-20s %-10s size %-12s used %-12s prio %d\n", s.Filename, s.Type,
			units.FormatSize(s.Size), units.FormatSize(s.Used), s.Priority)
	}
	return nil
}
