// Package memtool is the synthetic workload behind `tenon tool mem`. It runs
// inside a sandbox and reproduces the memory curve of a trajectory.MemProfile:
// it ramps resident memory up to the peak, holds it, drops to the retained
// level, optionally writes files into the workspace, and optionally leaves a
// detached background process holding the retained memory after it exits.
// The curve runs on the tool's progress, not the wall clock (StallSlack): a
// frozen tool resumes its ramp where it stopped.
//
// Memory is taken with anonymous mmap and every page is written (a third of
// it random, so that it compresses in zram as typical anonymous memory
// does), so it is resident and charged to the caller's memory cgroup; it is
// returned with madvise(MADV_DONTNEED), so a drop is visible to the kernel
// at once (no reliance on the Go garbage collector).
//
// The background process is the same binary re-executed through
// /proc/self/exe with the argv tail Args builds for a plain profile
// (peak = retained size, no ramp, hold for --background-for or forever), in a
// new session with stdin, stdout and stderr on /dev/null so the shell that ran
// the action does not wait for it. cmd/tenon needs no hidden mode: it only has
// to route `tenon tool mem FLAGS` to ParseArgs and Run.
//
// The package owns nothing outside its own process and the files directory; it
// must not touch cgroups or other processes.
package memtool
