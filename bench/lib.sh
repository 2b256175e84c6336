# Sourced by the bench/*.sh scripts that regenerate a results file.
#
# bench_setup NAME goes to the repository's root, refuses a dirty tree (a
# results file names the commit that produced it), sets traces (the real
# trace sets: $TRACES, default ../shared/traces), out (the results file:
# $OUT, default bench/results/NAME.md), commit (the commit whose tenon
# makes the results: $COMMIT, default HEAD), script (how to name the
# script in the results: `bench/NAME.sh`, with its own commit when that
# is not $commit) and work (a temporary directory, removed at exit), and
# builds tenon into $work/tenon.
#
# COMMIT lets one results snapshot come from one commit's tenon while a
# script that makes one of its files came later: the tenon of an ancestor
# of HEAD is built in a clone of it at $work/src. (Such a binary carries
# no VCS stamp; where it names its commit itself, as tenon bench and tenon
# harness do, run it from $work/src, whose HEAD is $commit.)
bench_setup() {
  cd "$(dirname "${BASH_SOURCE[0]}")/.."
  traces=${TRACES:-../shared/traces}
  out=${OUT:-bench/results/$1.md}
  if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "$1: the tree has uncommitted changes; commit first (a results file names its commit)" >&2
    exit 1
  fi
  local head
  head=$(git rev-parse HEAD)
  if ! commit=$(git rev-parse --verify --quiet "${COMMIT:-HEAD}^{commit}"); then
    echo "$1: COMMIT=$COMMIT is not a commit of this repository" >&2
    exit 1
  fi
  if ! git merge-base --is-ancestor "$commit" "$head"; then
    echo "$1: COMMIT=$COMMIT is not an ancestor of HEAD: results must name a commit of this history" >&2
    exit 1
  fi
  script="\`bench/$(basename "$0")\`"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  if [ "$commit" = "$head" ]; then
    go build -o "$work/tenon" ./cmd/tenon
  else
    script="\`bench/$(basename "$0")\` of \`${head:0:7}\`"
    git clone -q --no-checkout . "$work/src"
    git -C "$work/src" checkout -q --detach "$commit"
    (cd "$work/src" && go build -o "$work/tenon" ./cmd/tenon)
  fi
}
