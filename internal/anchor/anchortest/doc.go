// Package anchortest is the live-test scaffolding the anchor packages
// share (pageout, suspend, harness): zram swap turned on for one test and
// off at its end, a freezable cgroup, and the heap program run as a child
// of the test binary inside that cgroup.
//
// Every helper skips the test with a reason that names the missing kernel
// feature (root, pidfd_open/process_madvise, the zram module, the memory
// controller, the freezer) and registers cleanups that leave no swap,
// cgroup or process behind. Only tests import it.
package anchortest
