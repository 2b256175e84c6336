#!/usr/bin/env bash
# Regenerates bench/results/cluster-sim.md: a simulated cluster of 10 nodes
# and 2000 agents from the real AgentCgroup traces in ../shared/traces (or
# $TRACES), placed by the nodes' published agent slots or by static memory
# requests, each node running tenon or eager. Deterministic, about 20
# minutes on a loaded 2-core machine. Refuses a dirty tree: a results file
# names the commit that produced it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_setup cluster-sim
t="$work/tenon"
"$t" trace import agentcgroup "$traces/agentcgroup-haiku" -o "$work/haiku.jsonl" >/dev/null 2>&1
"$t" trace import agentcgroup "$traces/agentcgroup-batch18" -o "$work/batch18.jsonl" >/dev/null 2>&1
# 0.5 agents/s: haiku's 45 workflows 2 s apart, a copy every 90 s; batch18's 23, a copy every 46 s.
"$t" trace replicate "$work/haiku.jsonl" --copies 45 --spacing 2 --offset 90 --shuffle 1 -o "$work/haiku-2000.jsonl" 2>/dev/null
"$t" trace replicate "$work/batch18.jsonl" --copies 87 --spacing 2 --offset 46 --shuffle 1 -o "$work/batch18-2000.jsonl" 2>/dev/null
# A burst: 2 agents/s (haiku's 45 workflows 0.5 s apart, a copy every 22.5 s).
"$t" trace replicate "$work/haiku.jsonl" --copies 45 --spacing 0.5 --offset 22.5 --shuffle 1 -o "$work/haiku-2000-burst.jsonl" 2>/dev/null
# run FILE ARGS...: tenon sim cluster on $work/FILE, the command printed with FILE as named above.
run() {
  local file=$1
  shift
  echo
  echo '```'
  echo "# tenon sim cluster --workload $file $*"
  "$t" sim cluster --workload "$work/$file" "$@" 2>/dev/null
  echo '```'
}
{
  echo "# A simulated cluster: placement by published headroom against static requests"
  echo
  echo "Commit: \`$commit\` (clean tree). Date: $(date -u +%F). Produced by $script. Deterministic: one run per case."
  echo
  echo '```'
  echo "tenon trace import agentcgroup $traces/agentcgroup-SET -o SET.jsonl"
  echo "tenon trace replicate haiku.jsonl --copies 45 --spacing 2 --offset 90 --shuffle 1 -o haiku-2000.jsonl"
  echo "tenon trace replicate batch18.jsonl --copies 87 --spacing 2 --offset 46 --shuffle 1 -o batch18-2000.jsonl"
  echo "tenon trace replicate haiku.jsonl --copies 45 --spacing 0.5 --offset 22.5 --shuffle 1 -o haiku-2000-burst.jsonl"
  echo "tenon sim cluster --workload FILE --agents 2000 --nodes 10 --budget B [--request R]"
  echo '```'
  for set in haiku batch18; do
    for b in 2GiB 4GiB; do
      echo
      echo "## agentcgroup-$set, 2000 agents at 0.5/s, 10 nodes × $b"
      run "$set-2000.jsonl" --agents 2000 --nodes 10 --budget "$b"
    done
  done
  echo
  echo "## Requests at the median agent peak (overcommitted requests), 2 GiB"
  for set in haiku batch18; do
    run "$set-2000.jsonl" --agents 2000 --nodes 10 --budget 2GiB --placement requests --request p50
  done
  echo
  echo "## A burst: haiku, 2000 agents at 2/s, 10 nodes × 2 GiB"
  run haiku-2000-burst.jsonl --agents 2000 --nodes 10 --budget 2GiB
  echo
  echo "## Headroom published every 60 s instead of 10 s (the burst)"
  run haiku-2000-burst.jsonl --agents 2000 --nodes 10 --budget 2GiB --placement headroom --policy tenon --refresh 60s
} >"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
