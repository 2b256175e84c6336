package agentcgroup

import "github.com/tenon-dev/tenon/internal/units"

// NoiseMiB is how far the container's memory must rise above the level
// before a call, in the samples up to the next call, for inferEnd to take
// the rise as the call's own.
const NoiseMiB = 1.0

// nextStart is the latest a call without an end can have ended: the next
// call's start (the gap to it is model time), or for the last call (or
// one the next call starts before) the last sample; never before the
// call's own start.
func nextStart(samples []Sample, calls []Call, i int) float64 {
	start := epoch(calls[i].Start)
	if i+1 < len(calls) && !calls[i+1].Start.Before(calls[i].Start) {
		return epoch(calls[i+1].Start)
	}
	return max(start, samples[len(samples)-1].Epoch)
}

// inferEnd is the end of a call that has none in the file (the older
// AgentCgroup layout records start times only): the call ends at the first
// sample in (start, until] that reaches the highest level of those
// samples, when that level is more than NoiseMiB above the level before
// the call (samples[lo]) — a call's memory rises while it runs, and the
// call has ended by the time it peaks; otherwise the memory shows nothing
// of the call, which ends at its start (most tool calls take tens of
// milliseconds, far less than the 1 s sampling period; what remains of
// the gap is model time).
func inferEnd(samples []Sample, lo int, start, until float64) float64 {
	mib := func(i int) float64 { return float64(samples[i].Bytes) / float64(units.MiB) }
	peak, at := mib(lo)+NoiseMiB, start
	for i := lo + 1; i < len(samples) && samples[i].Epoch <= until; i++ {
		if samples[i].Epoch > start && mib(i) > peak {
			peak, at = mib(i), samples[i].Epoch
		}
	}
	return at
}
