// Package report turns replay results into the numbers seed 000 §5
// compares: makespan, P50/P95 workflow latency, peak domain memory, OOM
// events, sandbox timeouts, attempts and the attempt failure rate, completed
// and failed workflows, the oversubscription ratio and makespan over the
// lower bound. It writes them as an aligned table for people comparing
// policies side by side, as JSON for machines, and as a PNG plot of domain
// memory and running concurrency over time per policy (Figure 11).
//
// It reads only replay Results and trajectories; it runs
// nothing.
package report
