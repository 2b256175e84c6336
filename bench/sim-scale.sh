#!/usr/bin/env bash
# Regenerates bench/results/sim-scale.md, sim-scale-10k.json, sim-scale.json
# and sim-scale.png: 10,000 generated swe agents on a simulated 1 TiB host
# (eager, static-2048 and tenon, with the whole command's wall and CPU time)
# and the cost of one gate step against the number of sandboxes. The
# simulated outcomes are deterministic; the times depend on the machine and
# its load (the file records the load average). About ten minutes.
# Refuses a dirty tree: a results file names the commit that produced it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_setup sim-scale
dir=$(dirname "$out")
cmd=(sim --kind swe --n 10000 --seed 1 --budget 1TiB --oversub 4.75 --policy eager,static-2048,tenon --horizon 4h --json)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
/usr/bin/time -f '%e %U %M' -o "$work/time" "$work/tenon" "${cmd[@]}" >"$work/sim-scale-10k.json"
load1=$(cut -d' ' -f1-3 /proc/loadavg)
"$work/tenon" sim scale --iters 200 --plot "$work/sim-scale.png" --json >"$work/sim-scale.json"
{
  echo "# sim scale: 10,000 agents on a simulated 1 TiB host"
  echo
  echo "Commit: \`$commit\` (clean tree). Date: $(date -u +%F). Produced by $script. Machine: $(nproc) cores,"
  echo "$(free -g | awk '/^Mem:/{print $2}') GiB, $(uname -sr); load average $load0 at the start of the 10,000-agent run"
  echo "and $load1 at its end. The simulated outcomes (makespans, kills, completions) are deterministic;"
  echo "the wall and CPU times depend on the machine and its load."
  echo
  echo "## End to end: 10,000 swe agents, 1 TiB, default parameters"
  echo
  echo "Workload: \`--kind swe --n 10000 --seed 1 --oversub 4.75\` (the generator's memory scaled so that"
  echo "the profiled peaks sum to 4.75x the budget, the bundled live workload's ratio)."
  echo
  echo "    tenon ${cmd[*]} > sim-scale-10k.json"
  echo
  python3 - "$work/sim-scale-10k.json" "$work/time" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
wall, user, rss = open(sys.argv[2]).read().split()
print("Lower bound %.1f s. The whole command (three policies and the predictor's training): %.0f s of wall" % (d["lower_bound_s"], float(wall)))
print("time, %.0f s of user CPU, %.1f GiB peak resident (`/usr/bin/time`)." % (float(user), int(rss) / 2**20))
print()
print("| policy | makespan | / bound | P50 | P95 | peak / budget | OOM kills | completed | teardowns | page-outs |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
# teardowns and page-outs are in the run's idle_memory list, one entry per policy
idle = {m["policy"]: m for m in d.get("idle_memory") or []}
for r in d["results"]:
    mk = "dnf" if r.get("unfinished") else "%.1f s" % r["makespan_s"]
    ob = "%.2fx" % r["makespan_over_lower_bound"] if r.get("makespan_over_lower_bound") else "-"
    p = lambda v: "dnf" if v is None else "%.1f s" % v
    res = idle[r["policy"]]
    print("| %s | %s | %s | %s | %s | %.2fx | %d | %d/%d | %s | %s |" % (r["policy"], mk, ob, p(r["p50_s"]), p(r["p95_s"]),
          r["peak_bytes"] / d["budget_bytes"], r["oom_events"], r["completed"], r["workflows"],
          res.get("teardowns", 0), res.get("page_outs", 0)))
EOF
  echo
  echo "## Control-iteration cost (sim-scale.png, sim-scale.json)"
  echo
  echo "    tenon sim scale --iters 200 --plot sim-scale.png --json > sim-scale.json"
  echo
  echo "Mean wall time of one \`gate.Controller.Step\` over 200 control periods of synthetic sandboxes"
  echo "(half growing), with ample memory (green) and under pressure; one run, so the small sizes are noisy:"
  echo
  python3 - "$work/sim-scale.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print("    sandboxes  green step  pressure step")
for r in d:
    print("    %9d  %7.3f ms  %10.3f ms (%s)" % (r["sandboxes"], r["green_step_ms"], r["pressure_step_ms"], r["pressure"]))
EOF
} >"$work/out.md"
# Every file at once, once all are made: none is left from another commit.
mv "$work/sim-scale-10k.json" "$work/sim-scale.json" "$work/sim-scale.png" "$dir/"
mv "$work/out.md" "$out"
echo "wrote $out, sim-scale-10k.json, sim-scale.json and sim-scale.png at $commit"
