//go:build linux && cgo

package process

// The idle loop: what a sandbox's init runs between actions in place of
// the executor. The executor is the tenon binary, and Go initializes
// every package the binary links before main runs: an idle executor
// holds ~4 MiB of anonymous memory (heap from package initialization,
// the runtime's stacks and 16 prewarmed threads) plus kernel memory for
// its threads. An agent's sandbox is idle through every model wait, and
// on real traces idle sandboxes' memory, not bursts, fills the budget.
//
// So an idle executor, asked by the host (opHibernate, after each action
// and after the start, with Config.IdleLoop), execs this same binary as PREFIX __sandbox-idle
// PREFIX, keeping the channel (fd 3) open. The C constructor below runs
// before the Go runtime starts (as libcontainer's nsenter does): it
// makes init non-dumpable, tells the host it runs (opIdle), and waits in
// poll(2) until the channel has a request, then execs PREFIX
// __sandbox-wake PREFIX: the executor again, which reads that request.
// Init is the same process throughout (exec keeps the pid, the cgroup,
// the namespaces, no_new_privs and the seccomp filter), so the host sees
// nothing but the memory: ~0.1 MiB idle, and ~15 ms of CPU per wake.
//
// The executor hibernates only when init has no child: exec makes a
// process dumpable until its first instructions make it not, and in that
// window another process of the sandbox could open /proc/1/fd/3. With no
// child, no other process exists in the sandbox's pid namespace (orphans
// are init's children), and none can start: only the executor starts
// processes. A sandbox that keeps a background process keeps its
// executor resident. The idle loop takes no signal (none is handled) and
// touches its buffers in user mode before a system call copies them
// (heldio_linux.go: under the v1 OOM hold a kernel-mode fault on a
// paged-out page fails with EFAULT rather than wait).

/*
#include <errno.h>
#include <stdio.h>
#include <poll.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

// As protocol.go's idleArg, wakeArg and channelFd.
#define TENON_IDLE_ARG "__sandbox-idle"
#define TENON_WAKE_ARG "__sandbox-wake"
#define TENON_CHANNEL_FD 3
#define TENON_RETRIES 100

__attribute__((constructor)) static void tenon_idle_loop(int argc, char **argv, char **envp)
{
	if (argc < 3 || strcmp(argv[1], TENON_IDLE_ARG) != 0)
		return;
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

	static const char idle[] = "{\"op\":\"idle\"}\n";
	volatile char msg[sizeof idle];
	size_t done = 0, len = sizeof idle - 1;
	for (int tries = 0; done < len;) {
		memcpy((char *)msg, idle, sizeof idle); // touched in user mode
		ssize_t n = write(TENON_CHANNEL_FD, (const char *)msg + done, len - done);
		if (n > 0) {
			done += n;
			continue;
		}
		if (n < 0 && (errno == EINTR || ((errno == EFAULT || errno == ENOMEM || errno == ENOBUFS || errno == EAGAIN) && ++tries < TENON_RETRIES))) {
			if (errno != EINTR)
				usleep(10000);
			continue;
		}
		_exit(1);
	}

	volatile struct pollfd p;
	for (int tries = 0;;) {
		memset((void *)&p, 0, sizeof p);
		p.fd = TENON_CHANNEL_FD;
		p.events = POLLIN;
		int n = poll((struct pollfd *)&p, 1, -1);
		if (n > 0)
			break;
		if (n < 0 && (errno == EINTR || ((errno == EFAULT || errno == ENOMEM) && ++tries < TENON_RETRIES))) {
			if (errno != EINTR)
				usleep(10000);
			continue;
		}
		_exit(1);
	}
	if (!(p.revents & POLLIN))
		_exit(0); // the host closed its end: the sandbox ends

	int n = argc - 2;
	char *next[2 * n + 2];
	for (int i = 0; i < n; i++) {
		next[i] = argv[2 + i];
		next[n + 1 + i] = argv[2 + i];
	}
	next[n] = TENON_WAKE_ARG;
	next[2 * n + 1] = 0;
	// A request waits: exec the executor, however long memory is short.
	// Under the v1 OOM hold execve fails (ENOMEM, EFAULT) until the hold
	// ends, which can take longer than any bound set here: with the
	// retries capped at a second, init exited 127 in 1 of 6 runs of
	// TestLivePagedOutExecutorUnderHold (and once in CI); uncapped, 10 of
	// 10 passed. The host's deadline for the request ends a wait too long.
	for (int tries = 0;; tries++) {
		execve(next[0], next, envp);
		if (errno != ENOMEM && errno != EAGAIN && errno != EFAULT && errno != EINTR) {
			dprintf(2, "tenon idle loop: exec %s: %s\n", next[0], strerror(errno));
			_exit(127);
		}
		usleep(tries < TENON_RETRIES ? 10000 : 100000);
	}
}
*/
import "C"

// idleLoop: this build has the idle loop.
const idleLoop = true
