# Sourced by the bench/*.sh scripts that regenerate a results file, from
# the repository's root.
#
# bench_setup NAME refuses a dirty tree (a results file names the commit
# that produced it), sets commit (HEAD) and work (a temporary directory,
# removed at exit), and builds tenon into $work/tenon.
bench_setup() {
  if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "$1: the tree has uncommitted changes; commit first (a results file names its commit)" >&2
    exit 1
  fi
  commit=$(git rev-parse HEAD)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  go build -o "$work/tenon" ./cmd/tenon
}
