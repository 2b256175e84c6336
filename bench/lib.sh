# Sourced by the bench/*.sh scripts that regenerate a results file.
#
# bench_setup NAME goes to the repository's root, refuses a dirty tree (a
# results file names the commit that produced it), sets traces (the real
# trace sets: $TRACES, default ../shared/traces), out (the results file:
# $OUT, default bench/results/NAME.md), commit (HEAD) and work (a
# temporary directory, removed at exit), and builds tenon into $work/tenon.
bench_setup() {
  cd "$(dirname "${BASH_SOURCE[0]}")/.."
  traces=${TRACES:-../shared/traces}
  out=${OUT:-bench/results/$1.md}
  if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "$1: the tree has uncommitted changes; commit first (a results file names its commit)" >&2
    exit 1
  fi
  commit=$(git rev-parse HEAD)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  go build -o "$work/tenon" ./cmd/tenon
}
