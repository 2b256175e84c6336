package bench

import "errors"

// ErrBadMatrix is returned by Matrix.Cases when the matrix cannot be built:
// no budget, an unknown workload or group, a bad sweep value.
var ErrBadMatrix = errors.New("bench: bad matrix")

// ErrBadResults is returned by ReadJSON for a file that is not a bench
// results JSON.
var ErrBadResults = errors.New("bench: bad results file")

// ErrNoTraces is returned by LoadTraceSets when the traces directory is
// missing or holds no trace set: the traces group has nothing to replay.
var ErrNoTraces = errors.New("bench: no real trace sets")

// ErrUnfinished marks a checkpoint's case still in flight (Config.Checkpoint):
// its complete repetitions are kept, the rest had not run.
var ErrUnfinished = errors.New("unfinished")
