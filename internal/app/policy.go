package app

import (
	"log/slog"
	"slices"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/policy"
)

// buildPolicy builds the policy called name. It is the only place in the
// tree outside tests that constructs a policy: every caller builds each
// policy once per run and passes it along.
func buildPolicy(name string, opts policy.Options) (controller.Policy, error) {
	return policy.Lookup(name, opts)
}

// PolicyDoc is one registered policy name and its one-line help.
type PolicyDoc struct {
	Name string // an exact name ("eager") or a family ("static-N")
	Help string
}

// Policies lists the registered policies sorted by name, for help texts.
func Policies() []PolicyDoc {
	var out []PolicyDoc
	for _, e := range policy.Entries() {
		out = append(out, PolicyDoc{Name: e.Name, Help: e.Help})
	}
	return out
}

// PolicyNames lists the registered policy names, e.g. ["eager", "static-N"].
func PolicyNames() []string {
	var out []string
	for _, p := range Policies() {
		out = append(out, p.Name)
	}
	return out
}

// DefaultPolicy is the daemon's policy: "tenon" when it is registered,
// else "gate".
func DefaultPolicy() string {
	if slices.Contains(PolicyNames(), "tenon") {
		return "tenon"
	}
	return "gate"
}

// discardLog is the logger of a config that sets none.
func discardLog(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
