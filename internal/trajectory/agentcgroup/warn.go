package agentcgroup

import (
	"fmt"
	"sort"
	"strings"
)

// Kinds of warning: what the importer found wrong with a run it still
// imported, and what it did about it. Report.Warnings counts them.
const (
	WarnInferredEnd   = "end inferred (no usable end_timestamp)"
	WarnNoCommand     = "no command text (tool name used)"
	WarnUnknownTool   = "unknown tool (class is its name)"
	WarnBadCall       = "call without a valid timestamp dropped"
	WarnBadSample     = "unreadable memory sample dropped"
	WarnTruncated     = "truncated file (complete records kept)"
	WarnAfterSamples  = "call after the last memory sample dropped"
	WarnNoResultsJSON = "unreadable results.json (no image)"
)

// Warnings counts warnings by kind.
type Warnings map[string]int

func (w Warnings) add(kind string, n int) {
	if n > 0 {
		w[kind] += n
	}
}

func (w Warnings) merge(o Warnings) {
	for k, n := range o {
		w.add(k, n)
	}
}

// String lists the counts, largest first: "end inferred (...) 1210, ...".
func (w Warnings) String() string {
	kinds := make([]string, 0, len(w))
	for k := range w {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if w[kinds[i]] != w[kinds[j]] {
			return w[kinds[i]] > w[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, w[k])
	}
	return strings.Join(parts, ", ")
}
