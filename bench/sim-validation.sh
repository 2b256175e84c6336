#!/usr/bin/env bash
# Regenerates bench/results/sim-validation.md, .json and .png: the bundled
# workload (workloads/default.jsonl, what `tenon run` replays) simulated at
# 2 GiB under every policy, with and without the OOM hold, and tenon at
# admission's old 37.5 % margin. With LIVE=1 (as root) it also replays the
# workload live with `tenon run --policy eager,gate,tenon` on this host and
# sets the simulator's rows beside the live ones. The simulated tables are
# deterministic and take seconds; the live run takes a few minutes.
# Refuses a dirty tree: a results file names the commit that produced it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_setup sim-validation
git show "$commit:workloads/default.jsonl" >"$work/default.jsonl"
all=eager,static-4,tenon,agent-reservation,gate,admission,tenon-no-gate,tenon-no-admission,tenon-always-resident,tenon-static-pred,tenon-history-pred
dir=$(dirname "$out")
sim() { "$work/tenon" sim --workload "$work/default.jsonl" --budget 2GiB "$@"; }
sim --policy "$all" >"$work/all.txt"
sim --policy "$all" --json --plot "$work/sim-validation.png" >"$work/sim-validation.json"
sim --policy "$all" --param hold=off >"$work/nohold.txt"
sim --policy tenon --param margin=768MiB --json >"$work/margin.json"
if [ "${LIVE:-0}" = 1 ]; then
  sim --policy eager,gate,tenon --json >"$work/three.json"
  (cd "$work" && ./tenon run --policy eager,gate,tenon --plot "" --json --state-dir "$work/state") >"$work/live.json"
fi
{
  echo "# sim validation: bundled workload, 2 GiB, simulated vs live"
  echo
  echo "Commit: \`$commit\` (clean tree). Date: $(date -u +%F). Produced by $script. Machine: $(nproc) cores,"
  echo "$(uname -sr). The simulated results do not depend on the machine (deterministic: the same"
  echo "command prints the same table)."
  echo
  echo "Commands (\`workloads/default.jsonl\` is the bundled workload \`tenon run\` replays):"
  echo
  echo "    tenon sim --workload workloads/default.jsonl --budget 2GiB --policy $all"
  echo "    tenon sim ... (same) --json --plot sim-validation.png > sim-validation.json"
  echo "    tenon sim ... (same) --param hold=off                     # without the OOM hold"
  echo "    tenon sim --workload workloads/default.jsonl --budget 2GiB --policy tenon --param margin=768MiB   # admission's old 37.5 % margin"
  if [ -f "$work/live.json" ]; then
    echo "    tenon run --policy eager,gate,tenon --json                # live, as root"
  fi
  echo
  echo "The simulator drives the live decision code (\`policy.Machine\`: the gate, admission, the"
  echo "predictors, the OOM hold, residency) with a simulated clock; each sandbox follows its actions'"
  echo "memory profiles, and the domain OOM-kills the largest sandbox when usage would exceed the"
  echo "budget, unless the OOM hold is armed, in which case the allocation waits (\`tenon sim --help\`)."
  echo "It charges no CPU contention: a running action makes one second of progress per second however"
  echo "many run."
  echo
  if [ -f "$work/live.json" ]; then
    echo "## Simulated vs live"
    echo
    echo "Live: \`tenon run --policy eager,gate,tenon\` on this host (process backend, $(stat -fc %T /sys/fs/cgroup | sed 's/cgroup2fs/cgroup v2/;s/tmpfs/cgroup v1/'))."
    echo
    python3 - "$work/live.json" "$work/three.json" <<'EOF'
import json, sys
live, sim = (json.load(open(f)) for f in sys.argv[1:3])
def rows(d):
    return {r["policy"]: r for r in d["results"]}
L, S = rows(live), rows(sim)
def mk(r):
    return "dnf" if r.get("unfinished") else "%.1f s" % r["makespan_s"]
def done(r):
    return "%d/%d" % (r["completed"], r["workflows"])
print("| policy | live makespan | sim makespan | live OOM | sim OOM | live done | sim done |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for p in S:
    if p in L:
        l, s = L[p], S[p]
        print("| %s | %s | %s | %d | %d | %s | %s |" % (p, mk(l), mk(s), l["oom_events"], s["oom_events"], done(l), done(s)))
EOF
    echo
  fi
  echo "## All policies (with the OOM hold, the default)"
  echo
  echo '```'
  cat "$work/all.txt"
  echo '```'
  echo
  echo "\`sim-validation.json\` and \`sim-validation.png\` in this directory are the second command."
  echo
  echo "## Without the OOM hold (\`--param hold=off\`)"
  echo
  echo '```'
  cat "$work/nohold.txt"
  echo '```'
  echo
  echo "## Admission's old 37.5 % margin (\`--param margin=768MiB\`)"
  echo
  python3 - "$work/sim-validation.json" "$work/margin.json" <<'EOF'
import json, sys
a = next(r for r in json.load(open(sys.argv[1]))["results"] if r["policy"] == "tenon")
b = json.load(open(sys.argv[2]))["results"][0]
mk = lambda r: "dnf" if r.get("unfinished") else "%.1f s" % r["makespan_s"]
print("| policy | makespan at the default margin (one red region, 12.5 %) | at 768 MiB (37.5 %) | OOM | done |")
print("| --- | --- | --- | --- | --- |")
print("| tenon | %s | %s | %d / %d | %d/%d / %d/%d |" % (mk(a), mk(b), a["oom_events"], b["oom_events"], a["completed"], a["workflows"], b["completed"], b["workflows"]))
EOF
  echo
  echo "(margin.md has the reason for the change.)"
} >"$work/out.md"
# Every file at once, once all are made: none is left from another commit.
mv "$work/sim-validation.json" "$work/sim-validation.png" "$dir/"
mv "$work/out.md" "$out"
echo "wrote $out, $dir/sim-validation.json and $dir/sim-validation.png at $commit"
