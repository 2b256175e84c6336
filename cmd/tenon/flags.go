package main

import (
	"fmt"
	"strconv"
	"strings"
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
