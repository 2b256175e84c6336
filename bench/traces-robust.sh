#!/usr/bin/env bash
# Regenerates bench/results/traces-robust.md: the real AgentCgroup trace sets
# in ../shared/traces (or $TRACES) in the simulator under loads and hosts the
# mechanisms were not looked at with: every workflow three times (arrivals
# 2 s apart, copies 60 s apart, another order) and once (5 s apart), at
# 512 MiB, 1, 2 and 3 GiB, on cgroup v1, v2 and without swap; eager,
# agent-level reservation and tenon. Deterministic, a few minutes.
# Refuses a dirty tree: a results file names the commit that produced it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_setup traces-robust
policies=eager,agent-reservation,tenon
for set in haiku batch18; do
  "$work/tenon" trace import agentcgroup "$traces/agentcgroup-$set" -o "$work/$set.jsonl" >/dev/null 2>&1
  "$work/tenon" trace replicate --copies 3 --spacing 2 --offset 60 --shuffle 7 -o "$work/$set-x3.jsonl" "$work/$set.jsonl" >/dev/null 2>&1
  "$work/tenon" trace replicate --copies 1 --spacing 5 --shuffle 9 -o "$work/$set-x1.jsonl" "$work/$set.jsonl" >/dev/null 2>&1
done
for w in haiku-x3 batch18-x3 haiku-x1 batch18-x1; do
  for b in 512MiB 1GiB 2GiB 3GiB; do
    for host in v1 v2 no-swap; do
      case $host in
        no-swap) extra=(--page-out=false) ;;
        *) extra=(--cgroup "$host") ;;
      esac
      "$work/tenon" sim --workload "$work/$w.jsonl" --budget "$b" --policy "$policies" --json "${extra[@]}" 2>/dev/null |
        python3 -c '
import json, sys
d = json.load(sys.stdin)
for r in d["results"]:
    print(sys.argv[1], sys.argv[2], sys.argv[3], r["policy"], json.dumps(r))
' "$w" "$b" "$host"
    done
  done
done >"$work/rows"
python3 - "$work/rows" "$commit" "$traces" "$script" >"$out" <<'EOF'
import json, sys
rows = [l.split(" ", 4) for l in open(sys.argv[1])]
commit, traces, script = sys.argv[2], sys.argv[3], sys.argv[4]
cases, res = [], {}
for w, b, host, pol, js in rows:
    k = (w, b, host)
    if k not in res:
        cases.append(k)
        res[k] = {}
    res[k][pol] = json.loads(js)

def cell(r):
    left = r["unfinished"]
    if left > 0:
        return "dnf %d of %d (%d kills)" % (left, r["workflows"] - r.get("infeasible", 0), r["oom_events"])
    s = "%.0f / %.0f" % (r["makespan_s"], r["p50_s"])
    extra = []
    if r["oom_events"]:
        extra.append("**%d kills**" % r["oom_events"])
    if r["timeouts"]:
        extra.append("%d timeouts" % r["timeouts"])
    return s + (" (" + ", ".join(extra) + ")" if extra else "")

print("# Real traces in the simulator, other loads and hosts")
print()
print("Commit: `%s` (clean tree). Produced by %s. Deterministic: one run per case." % (commit, script))
print()
print("The two AgentCgroup trace sets in `%s`, imported, under loads the mechanisms were not" % traces)
print("looked at with: every workflow three times (`tenon trace replicate --copies 3 --spacing 2")
print("--offset 60 --shuffle 7`: 135 and 69 agents) and once (`--copies 1 --spacing 5 --shuffle 9`),")
print("at 512 MiB, 1, 2 and 3 GiB, on cgroup v1 (`--cgroup v1`, the default), v2 (`--cgroup v2`) and")
print("without swap (`--page-out=false`): `tenon sim --workload W --budget B --policy eager,agent-reservation,tenon`.")
print("Cells: makespan / P50 in seconds, with OOM kills and action timeouts; dnf: workflows that never")
print("finished. Workflows whose profiled peak exceeds the budget are infeasible and not counted (column).")
print()
print("| workload | budget | host | infeasible | eager | agent-reservation | tenon |")
print("| --- | --- | --- | ---: | --- | --- | --- |")
tot = {"runs": 0, "kills": 0, "timeouts": 0, "unfinished": 0, "faster_resv": 0, "faster_eager": 0, "eager_done": 0}
for k in cases:
    r = res[k]
    t = r["tenon"]
    print("| %s | %s | %s | %d | %s | %s | %s |" % (k[0], k[1], k[2], t.get("infeasible", 0), cell(r["eager"]), cell(r["agent-reservation"]), cell(t)))
    tot["runs"] += 1
    tot["kills"] += t["oom_events"]
    tot["timeouts"] += t["timeouts"]
    tot["unfinished"] += t["unfinished"]
    if t["makespan_s"] < r["agent-reservation"]["makespan_s"]:
        tot["faster_resv"] += 1
    e = r["eager"]
    if e["unfinished"] == 0:
        tot["eager_done"] += 1
        if t["makespan_s"] < e["makespan_s"]:
            tot["faster_eager"] += 1
print()
print("tenon over the %(runs)d runs: %(kills)d OOM kills, %(timeouts)d action timeouts, %(unfinished)d workflows unfinished;" % tot)
print("makespan shorter than agent-level reservation's in %(faster_resv)d of %(runs)d, shorter than Eager's in %(faster_eager)d of the %(eager_done)d where Eager finished." % tot)
EOF
echo "wrote $out"
