// Package containerdtest runs a real containerd for live tests of the NRI
// path of `tenon node`: containerd 1.7.24 (Debian trixie) and runc 1.1.5
// (bookworm; newer runc packages need a newer glibc) unpacked from their
// pinned packages into ~/.cache/tenon (debfetch), started with a root,
// state, sockets and config of their own under the test's temporary
// directory (cgroupfs driver, NRI on, restrict_oom_score_adj), and a CRI
// client over its socket.
//
// Start skips the test, with the reason, when the host is not root or the
// binaries cannot be fetched; with TENON_CONTAINERD=require it fails
// instead. Cleanup stops and removes every pod the test ran, stops
// containerd and its shims (by pid) and unmounts what they left.
package containerdtest
