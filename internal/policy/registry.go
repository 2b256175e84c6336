package policy

import (
	"fmt"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tenon-dev/tenon/internal/controller"
)

// Options are what a policy constructor may need besides its name.
type Options struct {
	Budget int64        // domain memory budget in bytes
	Logger *slog.Logger // nil means discard
	// Params holds policy-specific settings (key=value from the command
	// line); constructors reject keys they do not know.
	Params map[string]string
	// Workflows with recorded measurements train the predictors of the
	// policies that admit actions (cross-fitted by task, see TrainPredictor).
	Workflows []trajectory.Workflow
	// Predictor, when set, is used instead of training one from Workflows
	// (e.g. a model file loaded with predict.Load).
	Predictor predict.Predictor
	// StateDir is where policies that keep state during a run (residency's
	// captured layers and recovery records) put it; it must be on the same
	// file system as the backend's state. "" turns residency off.
	StateDir string
	// TimeScale is the replay's time compression (0 means 1); residency
	// uses it to turn a next action's recorded wait into a predicted wait.
	TimeScale float64
}

// Factory builds a policy. arg is the part of the name after the
// registered prefix ("4" for "static-4" under "static-"), "" for an exact name.
type Factory func(arg string, opts Options) (controller.Policy, error)

// Entry is one registered policy name.
type Entry struct {
	// Name is an exact name ("eager") or, when it ends in "-N", a family
	// matched by prefix ("static-N" matches "static-4").
	Name string
	Help string // one line for --help
	New  Factory
}

var (
	regMu    sync.RWMutex
	registry = map[string]Entry{}
)

func init() {
	Register(Entry{Name: "eager", Help: "no control: every agent and action runs at once", New: func(string, Options) (controller.Policy, error) {
		return NewEager(), nil
	}})
	Register(Entry{Name: "static-N", Help: "at most N agents at once, e.g. static-4", New: func(arg string, _ Options) (controller.Policy, error) {
		n, err := strconv.Atoi(arg)
		if err != nil {
			return nil, fmt.Errorf("%w: static-N wants a number after static-, got %q", ErrBadOption, arg)
		}
		return NewStaticN(n)
	}})
}

// Register adds a policy name, which must be lower case apart from a
// family's "-N" suffix. It panics if the name is taken, as that is a
// programming error found at init.
func Register(e Entry) {
	if base, _ := strings.CutSuffix(e.Name, "-N"); base != strings.ToLower(base) || base == "" {
		panic("policy: name " + e.Name + " must be lower case")
	}
	regMu.Lock()
	defer regMu.Unlock()
	if _, ok := registry[e.Name]; ok {
		panic("policy: " + e.Name + " registered twice")
	}
	registry[e.Name] = e
}

// Entries lists the registered policies sorted by name.
func Entries() []Entry {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]Entry, 0, len(registry))
	for _, e := range registry {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names lists the registered names, e.g. ["eager", "static-N"].
func Names() []string {
	var out []string
	for _, e := range Entries() {
		out = append(out, e.Name)
	}
	return out
}

// Lookup builds the policy called name (case-insensitive).
func Lookup(name string, opts Options) (controller.Policy, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	key := strings.ToLower(strings.TrimSpace(name))
	regMu.RLock()
	e, ok := registry[key]
	arg := ""
	if !ok {
		for n, cand := range registry {
			prefix, fam := strings.CutSuffix(n, "-N")
			if fam && strings.HasPrefix(key, prefix+"-") && len(key) > len(prefix)+1 {
				e, arg, ok = cand, key[len(prefix)+1:], true
				break
			}
		}
	}
	regMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q: valid names are %s", ErrUnknown, name, strings.Join(Names(), ", "))
	}
	p, err := e.New(arg, opts)
	if err != nil {
		return nil, fmt.Errorf("policy %q: %w", name, err)
	}
	return p, nil
}
