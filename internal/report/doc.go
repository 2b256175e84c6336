// Package report turns replay results into the numbers seed 000 §5
// compares: makespan, P50/P95 workflow latency, goodput, peak domain
// memory, OOM events, sandbox timeouts, attempts and the attempt failure
// rate, completed and unfinished workflows, the oversubscription ratio and
// makespan over the lower bound. Makespan and latency are over every
// workflow: one that never completed makes the makespan, and a percentile
// that falls on it, DNF (did not finish), and a speedup over a run that did
// not finish is reported as "<policy> did not finish N of M" instead of a
// ratio (Speedup). Aggregate takes the median and min–max of repeated
// comparisons.
//
// It writes them as an aligned table for people comparing policies side by
// side, as JSON for machines, and as a PNG plot of domain memory and
// running concurrency over time per policy (Figure 11).
//
// It reads only replay Results and trajectories; it runs
// nothing.
package report
