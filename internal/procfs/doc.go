// Package procfs parses the /proc text formats more than one tenon package
// reads: /proc/PID/maps (ParseMaps, read by internal/census and
// internal/anchor/pageout), /proc/PID/mountinfo (ParseMountinfo, read by
// internal/cgroup and internal/census) and the octal escapes the kernel
// writes into path fields of mountinfo and /proc/swaps (Unescape, read by
// internal/cgroup and internal/swap).
//
// Parsers take an io.Reader and are tested with literal strings; the
// package opens no files and owns nothing at run time. It imports only the
// standard library, so any package may use it.
package procfs
