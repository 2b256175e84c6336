// Package workload generates synthetic trajectories for benchmarks: kinds
// swe (SWE-bench-like coding), science (ScienceAgentBench-like data
// processing) and rl (Orchard-like synchronized RL rollouts). Its
// distributions come from a Calibration derived from the real AgentCgroup
// traces (calibration.json, produced by Calibrate; see calibration.md), so
// generated workflows look like recorded ones while every action is a Mem
// profile that replays anywhere, with a realistic Command and Class for the
// predictor. A kind with RealSuffix ("swe-real") keeps the traces' memory
// scale, action counts and waits, capping only the calibration's overstated
// tail (shape.go).
//
// Generation is deterministic for a seed. The package only builds values; it
// reads no trace files itself (the calibration test does) and touches no
// kernel interface.
package workload
