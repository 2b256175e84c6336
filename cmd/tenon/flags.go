package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/replay"
)

// listFlag is every list-valued flag: a comma-separated list that may also
// be repeated (--policy a,b --policy c is a, b, c). Blank items are
// dropped. A default given to newListFlag is replaced, not extended, by the
// first use of the flag.
type listFlag struct {
	items     []string
	isDefault bool
}

// newListFlag returns a list flag holding def until the flag is set.
func newListFlag(def ...string) *listFlag {
	return &listFlag{items: def, isDefault: len(def) > 0}
}

func (l *listFlag) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(l.items, ",")
}

func (l *listFlag) Set(v string) error {
	if l.isDefault {
		l.items, l.isDefault = nil, false
	}
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			l.items = append(l.items, s)
		}
	}
	return nil
}

// ints parses the items as positive integers; what names the flag in the
// error, e.g. "--pid".
func (l *listFlag) ints(what string) ([]int, error) {
	out := make([]int, 0, len(l.items))
	for _, s := range l.items {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s: %q is not a positive integer", what, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// paramFlag is the repeated key=value --param flag of policy parameters.
type paramFlag map[string]string

func (p paramFlag) String() string { return fmt.Sprint(map[string]string(p)) }

func (p paramFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", v)
	}
	p[k] = val
	return nil
}

// budgetHelp documents the budget flags.
const budgetHelp = "memory budget of the workload domain, e.g. 2GiB (the domain cgroup's limit)"

// timeoutFlag is --action-timeout: "auto" (the default), a duration, or 0
// for none.
type timeoutFlag struct {
	d   time.Duration
	set bool // false: auto
}

func (f *timeoutFlag) String() string {
	if f == nil || !f.set {
		return "auto"
	}
	return f.d.String()
}

func (f *timeoutFlag) Set(v string) error {
	if v == "auto" {
		f.d, f.set = 0, false
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return fmt.Errorf("want auto, 0 or a positive duration such as 90s, got %q", v)
	}
	f.d, f.set = d, true
	return nil
}

// config is the flag as app.ReplayConfig.ActionTimeout (and SimConfig's):
// 0 for auto, negative for none.
func (f *timeoutFlag) config() time.Duration {
	switch {
	case !f.set:
		return 0
	case f.d == 0:
		return -1
	}
	return f.d
}

// actionTimeoutHelp documents --action-timeout.
var actionTimeoutHelp = fmt.Sprintf("kill an action running longer, frozen time included: a sandbox timeout, which fails the attempt; "+
	"auto: %dx the workload's longest action at the time scale, at least %s; 0: none", replay.ActionTimeoutFactor, replay.MinActionTimeout)
