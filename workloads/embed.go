// Package workloads holds the bundled trajectory files, embedded in the
// tenon binary so `tenon run` works without any file on disk.
package workloads

import _ "embed"

// Default is workloads/default.jsonl: 12 SWE-like workflows (see README.md).
//
//go:embed default.jsonl
var Default []byte
