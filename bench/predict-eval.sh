#!/usr/bin/env bash
# Prints the tables of bench/results/predict.md: tenon predict train and
# eval (--json) on held-out 70/30 task splits (seeds 1-5) of both real
# AgentCgroup trace sets in ../shared/traces (or $TRACES) and across the
# sets both ways, summarised with python3. About two minutes. Refuses a
# dirty tree: the tables name the commit that produced them.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bench_setup predict
H=$traces/agentcgroup-haiku B=$traces/agentcgroup-batch18
t=$work/tenon
for s in haiku batch18; do
  D=$H; [ $s = batch18 ] && D=$B
  for S in 1 2 3 4 5; do
    $t predict train --traces "$D" --val 0.3 --seed $S -o "$work/m-$s-$S.json" 2>/dev/null
    $t predict eval --model "$work/m-$s-$S.json" --train "$D" --test "$D" --seed $S --json >"$work/e-$s-$S.json"
  done
done
$t predict train --traces "$H" --val 0 --seed 1 -o "$work/m-h.json" 2>/dev/null
$t predict eval --model "$work/m-h.json" --train "$H" --test "$B" --seed 1 --json >"$work/e-h2b.json"
$t predict train --traces "$B" --val 0 --seed 1 -o "$work/m-b.json" 2>/dev/null
$t predict eval --model "$work/m-b.json" --train "$B" --test "$H" --seed 1 --json >"$work/e-b2h.json"
echo "Commit: \`$commit\`. Produced by $script on $(date -u +%F)."
echo
python3 - "$work" <<'PY'
import json, os, sys
d = sys.argv[1]
MiB = 1 << 20
def load(n): return json.load(open(os.path.join(d, n)))
held = {s: [f"e-{s}-{i}.json" for i in range(1, 6)] for s in ("haiku", "batch18")}
sets = [(f"{s} {i}", f) for s in held for i, f in enumerate(held[s], 1)]
sets += [("haiku → batch18", "e-h2b.json"), ("batch18 → haiku", "e-b2h.json")]
P = ["static", "history-only", "current", "static-p90", "current-p90"]
def pred(e, p): return next(x for x in e["predictors"] if x["name"] == p)
def cov(e, p): return e["p90_coverage"][[x["name"] for x in e["predictors"]].index(p)]
def adm(e, b): return next(x for x in e["admission"] if x["budget_bytes"] == b * MiB)
def row(*c): print("| " + " | ".join(str(x) for x in c) + " |")
def head(*c): row(*c); print("|" + "---|" * len(c))
head("split", "test tasks / actions", "heavy ≥ 64 / ≥ 128 MiB", "static MAE", "history-only MAE", "current MAE",
     "current-p90 MAE", "static P90 APE %", "current P90 APE %", "static-p90 coverage %", "current-p90 coverage %")
for name, f in sets:
    e = load(f)
    row(name, f"{e['tasks']} / {e['examples']}", f"{adm(e, 512)['heavy']} / {adm(e, 1024)['heavy']}",
        *[f"{pred(e, p)['mae_mib']:.1f}" for p in ("static", "history-only", "current", "current-p90")],
        *[f"{pred(e, p)['p90_ape']:.0f}" for p in ("static", "current")],
        *[f"{cov(e, p):.1f}" for p in ("static-p90", "current-p90")])
print()
head("set (5 splits pooled)", *[f"{p} MAE" for p in P], "current-p90 coverage %")
for s, files in held.items():
    es = [load(f) for f in files]
    n = sum(e["examples"] for e in es)
    row(f"{s} held-out", *[f"{sum(pred(e, p)['mae_mib'] * e['examples'] for e in es) / n:.1f}" for p in P],
        f"{sum(cov(e, 'current-p90') * e['examples'] for e in es) / n:.1f}")
print()
head("set", "line", *[f"{p} recall / precision %" for p in P])
groups = [("haiku held-out, 5 splits pooled", held["haiku"]), ("batch18 held-out, 5 splits pooled", held["batch18"]),
          ("haiku → batch18", ["e-h2b.json"]), ("batch18 → haiku", ["e-b2h.json"])]
for g, files in groups:
    es = [load(f) for f in files]
    for b in (512, 1024, 2048):
        heavy = sum(adm(e, b)["heavy"] for e in es)
        cells = []
        for p in P:
            hs = [next(x for x in adm(e, b)["predictors"] if x["name"] == p) for e in es]
            hits, fl = sum(h.get("hits", 0) for h in hs), sum(h.get("flagged", 0) for h in hs)
            cells.append(f"{100 * hits / heavy if heavy else 0:.0f} / {100 * hits / fl if fl else 0:.0f}")
        row(g, f"{b // 8} MiB ({heavy} heavy)", *cells)
print()
head("split", "heavy > 1 GiB", *[f"{p} precision / recall %" for p in ("static", "history-only", "current", "current-p90")])
for name, f in sets:
    e = load(f)
    t = next(x for x in e["thresholds"] if x["threshold_bytes"] == 1024 * MiB)
    row(name, t["heavy"], *[f"{h['precision']:.0f} / {h['recall']:.0f}" for h in t["predictors"] if h["name"] in ("static", "history-only", "current", "current-p90")])
PY
for f in "haiku 1:$H:m-haiku-1.json:$H" "haiku → batch18:$H:m-h.json:$B" "batch18 → haiku:$B:m-b.json:$H"; do
  IFS=: read -r name train model test <<<"$f"
  echo
  echo "### $name (\`tenon predict eval --model M --train $train --test $test --seed 1\`)"
  echo
  echo '```'
  $t predict eval --model "$work/$model" --train "$train" --test "$test" --seed 1
  echo '```'
done
