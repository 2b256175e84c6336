// Package bench is the benchmark matrix behind `tenon bench`: it turns a
// Matrix (budgets, workloads, sweeps) into a list of Cases, runs them one
// after the other through an injected function (the CLI replays each case
// under its policies in real sandboxes), keeps going past a failed case,
// stops cleanly on cancellation with what finished, picks the best Static-N,
// computes the goals of seed 000 §5 from the headline case, and writes the
// results files: Markdown, JSON and PNG plots (seed 000 Figures 9, 11, 13,
// 14), each atomically (WriteResults); Replot redraws an earlier run's
// plots from its JSON.
//
// It owns no kernel state and starts no sandbox: everything it knows about a
// run comes back from the RunFunc as a report.Comparison. The only files it
// writes are the results files in the directory it is given; the only ones
// it reads, besides an earlier results JSON, are the real trace sets of the
// traces group (LoadTraceSets), at run time and never copied.
package bench
