// Package hostile indexes the hostile suite: the tests that reproduce
// every finding of issue 22 (what a hostile or broken command must not be
// able to do) against the real process backend, the real docker backend
// where a finding applies to it, or the real daemon. The tests live next
// to the code they exercise and are all named TestHostile*, so
//
//	go test -run Hostile ./...
//
// runs the suite (as root on a cgroup v1 host with e2fsprogs and a
// reachable dockerd; elsewhere the live ones skip naming the missing
// feature). Suite lists which test
// covers which finding; this package's test checks that every finding is
// covered and that every TestHostile* test is listed (suite_test.go).
package hostile
