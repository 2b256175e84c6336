// Package results checks bench/results: every results file there must name the
// command that produced it and a committed tree (a commit that is an ancestor of
// HEAD), must not say it came from uncommitted code, and must be listed in
// bench/results/README.md; the same holds in bench/results/archive (superseded
// measurements kept for the record) with its own README.md. The package has no
// code of its own; the checks are its tests, so that `go test ./...` runs them.
// They read the repository through git and skip, saying why, where git or the .git
// directory is unavailable (a source tarball).
package results
