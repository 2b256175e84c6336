// Package vmtest boots a Linux kernel under QEMU and runs Go test binaries
// inside it, so that tenon's live tests run on a kernel and cgroup layout
// the host does not have (pure cgroup v2, on hosts whose own memory
// hierarchy is v1).
//
// FetchKernel downloads a Debian kernel package by URL into a cache
// directory, checks it against a pinned SHA-256 and extracts its vmlinuz
// (also pinned), so a run never depends on the host's own kernel packages
// and never upgrades anything; Modules.Files does the same for kernel
// modules (DebianCloudZram: zram, which the cloud kernel builds as a
// module, for page-out to compressed swap in the guest), decompressed with
// xz. BuildInitramfs packs busybox, the kernel modules (loaded with insmod
// before the tests), the test
// binaries (built with go test -c) and their shared libraries into a newc
// cpio archive with a generated /init: it moves the root to a tmpfs (so
// pivot_root works for the container runtime), mounts proc, sys, dev and
// cgroup2 with the memory, cpu, io and pids controllers enabled for
// children, runs each test binary with its arguments in turn, and powers
// off. Run boots QEMU with software emulation (TCG), or KVM when a probe
// boot under KVM succeeds, streams the tests' output from a second serial
// port and returns each binary's output and exit status.
//
// The package owns its temporary directory and the QEMU process it
// starts, and removes or kills both before Run returns, also on failure or
// cancellation. It needs no root on the host; the guest runs everything as
// root.
package vmtest
