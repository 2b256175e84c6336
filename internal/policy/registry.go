package policy

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/gate"
	"github.com/tenon-dev/tenon/internal/predict"
	"github.com/tenon-dev/tenon/internal/trajectory"
	"github.com/tenon-dev/tenon/internal/units"
)

// Options are what building a policy may need besides its name.
type Options struct {
	Budget int64 // domain memory budget in bytes
	// Params holds policy-specific settings (key=value from the command
	// line); a policy rejects keys it does not know.
	Params map[string]string
	// Workflows with recorded measurements train the predictors of the
	// policies that admit actions (cross-fitted by task, see TrainPredictor)
	// and are agentcgroup's offline profile.
	Workflows []trajectory.Workflow
	// Predictor, when set, is used instead of training one from Workflows
	// (a model file loaded with predict.Load, or the simulator's sampled
	// predictors).
	Predictor predict.Predictor
	// TimeScale is the replay's time compression (0 means 1): the gate runs
	// on the replay's clock (ScaledGate).
	TimeScale float64
	// ActionTimeout is the host's action timeout on the replay's clock (0:
	// none): the OOM hold waits at least that long while other sandboxes
	// progress (HoldMaxWaitFor).
	ActionTimeout time.Duration
	// CPUs is the number of CPUs the host's sandboxes share (0: unknown,
	// CPU pacing off; the simulator models no CPU).
	CPUs float64
}

// entry is one registered policy name.
type entry struct {
	name, help string
	// spec switches the policy's mechanisms on; arg is the number of a "-N"
	// family ("4" for static-4).
	spec func(arg string) (Spec, error)
	// configure fills a configuration from the options (nil: the policy
	// takes no parameters).
	configure func(cfg *Config, opts Options) error
}

// entries is the one registry of policy names: the replay, the daemon, the
// bench and the simulator all resolve names here.
var entries = []entry{
	{name: "eager", help: "no control: every agent and action runs at once",
		spec: func(string) (Spec, error) { return Spec{}, nil }},
	{name: "static-N", help: "at most N agents at once, e.g. static-4", spec: staticSpec},
	{name: "agent-reservation", help: "agent-level peak reservation (after ThunderAgent): each agent holds its profiled lifetime peak for its whole life; margin=SIZE",
		spec: func(string) (Spec, error) { return Spec{Reservation: true}, nil }, configure: configureReservation},
	{name: "agentcgroup", help: "AgentCgroup-like: top high=0.2 of profiled actions unbounded, the rest under memory.high low=min(400MiB,budget/8) (emulated on cgroup v1)",
		spec: func(string) (Spec, error) { return Spec{AgentCgroup: true}, nil }, configure: configureAgentCgroup},
}

func init() {
	for _, v := range variants {
		entries = append(entries, entry{name: v.Name, help: v.Help,
			spec: func(string) (Spec, error) {
				return Spec{Gate: v.Gate, Admission: v.Admission, Residency: v.Residency, Predictor: v.Predictor}, nil
			},
			configure: configureTenon})
	}
}

// Entry describes a registered policy for help texts.
type Entry struct{ Name, Help string }

// Entries lists the registered policies sorted by name.
func Entries() []Entry {
	out := make([]Entry, 0, len(entries))
	for _, e := range entries {
		out = append(out, Entry{Name: e.name, Help: e.help})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names lists the registered names, e.g. ["admission", "agent-reservation", …, "static-N", …].
func Names() []string {
	var out []string
	for _, e := range Entries() {
		out = append(out, e.Name)
	}
	return out
}

// lookup finds the entry for a name (case-insensitive; "static-4" for the
// family "static-N") and the family's argument.
func lookup(name string) (entry, string, string, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	for _, e := range entries {
		if prefix, fam := strings.CutSuffix(e.name, "-N"); fam {
			if rest, ok := strings.CutPrefix(key, prefix+"-"); ok && rest != "" {
				return e, key, rest, nil
			}
		} else if key == e.name {
			return e, key, "", nil
		}
	}
	return entry{}, "", "", fmt.Errorf("%w %q: valid names are %s", ErrUnknown, name, strings.Join(Names(), ", "))
}

// ParseSpec maps a policy name to what it switches on, without building
// anything (no predictor is trained).
func ParseSpec(name string) (Spec, error) {
	e, key, arg, err := lookup(name)
	if err != nil {
		return Spec{}, err
	}
	sp, err := e.spec(arg)
	if err != nil {
		return Spec{}, fmt.Errorf("policy %q: %w", name, err)
	}
	sp.Name = key
	return sp, nil
}

// Configure fills the configuration of sp from the options: its
// parameters, the gate on the replay's clock, the OOM hold's timeout, the
// agent reserve, the predictor (opts.Predictor, or trained on
// opts.Workflows) and AgentCgroup's classes.
func Configure(sp Spec, opts Options) (Config, error) {
	e, _, _, err := lookup(sp.Name)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{Spec: sp, Budget: opts.Budget}
	if e.configure == nil {
		for k := range opts.Params {
			return Config{}, fmt.Errorf("policy %q: %w: unknown parameter %q (%s takes none)", sp.Name, ErrBadOption, k, sp.Name)
		}
		return cfg, nil
	}
	if err := e.configure(&cfg, opts); err != nil {
		return Config{}, fmt.Errorf("policy %q: %w", sp.Name, err)
	}
	return cfg, nil
}

// Resolve is ParseSpec then Configure.
func Resolve(name string, opts Options) (Config, error) {
	sp, err := ParseSpec(name)
	if err != nil {
		return Config{}, err
	}
	return Configure(sp, opts)
}

// Build resolves name and returns its machine.
func Build(name string, opts Options) (*Machine, error) {
	cfg, err := Resolve(name, opts)
	if err != nil {
		return nil, err
	}
	m, err := NewMachine(cfg)
	if err != nil {
		return nil, fmt.Errorf("policy %q: %w", name, err)
	}
	return m, nil
}

func staticSpec(arg string) (Spec, error) {
	n, err := strconv.Atoi(arg)
	if err != nil {
		return Spec{}, fmt.Errorf("%w: static-N wants a number after static-, got %q", ErrBadOption, arg)
	}
	if n < 1 {
		return Spec{}, fmt.Errorf("%w: static-N needs N >= 1, got %d", ErrBadOption, n)
	}
	return Spec{StaticN: n}, nil
}

func configureReservation(cfg *Config, opts Options) error {
	for k, v := range opts.Params {
		switch k {
		case "margin":
			n, err := units.ParseSize(v)
			if err != nil || n < 0 {
				return fmt.Errorf("%w: margin=%q: want a size such as 64MiB", ErrBadOption, v)
			}
			cfg.ReserveMargin = n
		default:
			return fmt.Errorf("%w: unknown parameter %q (agent-reservation takes margin=)", ErrBadOption, k)
		}
	}
	if cfg.Budget <= 0 {
		return fmt.Errorf("%w: agent-reservation needs a memory budget", ErrBadOption)
	}
	return nil
}

// AgentCgroup defaults.
const (
	// DefaultHighFraction is the share of profiled actions AgentCgroup
	// classes High (the top 20% by peak).
	DefaultHighFraction = 0.2
	// DefaultLowLimit is the paper's Low threshold (400 MB, seed 000
	// Appendix C); the default is this or budget/8, whichever is smaller.
	DefaultLowLimit = 400 * units.MiB
)

// configureAgentCgroup is the AgentCgroup baseline of seed 000 §5.1 (as
// analysed in its Appendix C): every tool call is classed High or Low from
// pre-execution profiling; High calls run unbounded and Low calls under a
// fixed memory threshold on the sandbox's cgroup, set before the call is
// dispatched and lifted when it returns (Grant.Limit). Over every action of
// the profiled workflows (Action.PeakMiB) the high= fraction with the
// largest peaks are High; at run time an action is High when its own
// profiled peak is at least the smallest High peak.
func configureAgentCgroup(cfg *Config, opts Options) error {
	high := DefaultHighFraction
	for k, v := range opts.Params {
		switch k {
		case "high":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
				return fmt.Errorf("%w: high=%q: want a fraction in [0, 1]", ErrBadOption, v)
			}
			high = f
		case "low":
			n, err := units.ParseSize(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("%w: low=%q: want a positive size such as 400MiB", ErrBadOption, v)
			}
			cfg.LowLimit = n
		default:
			return fmt.Errorf("%w: unknown parameter %q (agentcgroup takes high=, low=)", ErrBadOption, k)
		}
	}
	cfg.HighMiB = HighThreshold(opts.Workflows, high)
	if cfg.LowLimit == 0 {
		cfg.LowLimit = DefaultLowLimit
		if cfg.Budget > 0 {
			cfg.LowLimit = min(cfg.LowLimit, cfg.Budget/8)
		}
	}
	return nil
}

// HighThreshold returns the smallest peak (MiB) of the fraction of the
// workflows' actions with the largest peaks: round(fraction × n) actions of
// n, at least one when fraction > 0. It is +Inf when no action is High.
func HighThreshold(workflows []trajectory.Workflow, fraction float64) float64 {
	var peaks []float64
	for _, w := range workflows {
		for _, a := range w.Actions {
			peaks = append(peaks, a.PeakMiB())
		}
	}
	k := int(math.Round(fraction * float64(len(peaks))))
	if fraction > 0 && k == 0 && len(peaks) > 0 {
		k = 1
	}
	if k == 0 {
		return math.Inf(1)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(peaks)))
	return peaks[k-1]
}

// Variant is one configuration of the tenon policy: tenon and its
// ablations (seed 000 Table 4).
type Variant struct {
	Name, Help string
	Gate       bool
	Admission  bool
	Residency  bool   // idle sandboxes may be torn down (given a state dir)
	Predictor  string // PredCurrent, PredStatic or PredHistory when Admission is on
}

var variants = []Variant{
	{Name: "tenon", Help: "tenon: predicted-memory admission + growth gate (the full policy)", Gate: true, Admission: true, Residency: true, Predictor: PredCurrent},
	{Name: "gate", Help: "runtime execution gate alone: pause fast-growing sandboxes under pressure (seed 000 Algorithm 1)", Gate: true},
	{Name: "admission", Help: "water-level action admission alone, current predictor", Admission: true, Predictor: PredCurrent},
	{Name: "tenon-always-resident", Help: "ablation: tenon keeping every sandbox resident (no teardown)", Gate: true, Admission: true, Predictor: PredCurrent},
	{Name: "tenon-no-admission", Help: "ablation: tenon without admission control", Gate: true, Residency: true},
	{Name: "tenon-no-gate", Help: "ablation: tenon without memory-growth control", Admission: true, Residency: true, Predictor: PredCurrent},
	{Name: "tenon-static-pred", Help: "ablation: tenon with the static predictor (class and command only)", Gate: true, Admission: true, Residency: true, Predictor: PredStatic},
	{Name: "tenon-history-pred", Help: "ablation: tenon with the history-only predictor", Gate: true, Admission: true, Residency: true, Predictor: PredHistory},
}

// configureTenon fills cfg for a tenon variant: its parameters
// (ApplyTenonParams), the gate on the replay's clock, the hold's timeout
// and, with admission, the agent reserve and the predictor (opts.Predictor
// when it is of the variant's kind or the variant uses the current one,
// else trained on opts.Workflows).
func configureTenon(cfg *Config, opts Options) error {
	var hold time.Duration
	cfg.HeldBudget = true // the default; held-budget=off is the ablation
	cfg.CPUs, cfg.CPUBusy = opts.CPUs, DefaultCPUBusy
	if err := ApplyTenonParams(cfg, &hold, opts.Params); err != nil {
		return err
	}
	cfg.GateConfig = ScaledGate(cfg.GateConfig, opts.TimeScale)
	if cfg.Gate && hold >= 0 {
		cfg.Hold = HoldTimeout(hold, cfg.GateConfig)
		if cfg.HoldMaxWait == 0 {
			cfg.HoldMaxWait = HoldMaxWaitFor(cfg.Hold, opts.ActionTimeout)
		}
	}
	if !cfg.Admission {
		return nil
	}
	cfg.AgentReserve = AgentReserve(opts.Workflows, opts.Budget)
	if opts.Predictor != nil && (cfg.Predictor == PredCurrent || opts.Predictor.Name() == cfg.Predictor) {
		cfg.Model = opts.Predictor
		return nil
	}
	p, err := TrainPredictor(cfg.Predictor, opts.Workflows, opts.Budget/8, 1)
	if err != nil {
		return err
	}
	cfg.Model = p
	return nil
}

// AgentReserve is the largest recorded action peak of the training
// workflows (the heavy action a running agent may still make), at most a
// quarter of the budget.
//
// Pacing adds it to the floors that reclaimed sandboxes owe (OwedFloor),
// and the two can keep agents out of free memory: in the simulator on the
// haiku traces twice at 1 GiB, 19 agents waited from 50 s to 965 s, with
// 500 MiB free late on, behind two paged-out sandboxes owing 126 MiB each
// and this 256 MiB reserve (reserve 0: P50 171 -> 127 s, but batch18 at
// 1 GiB 504 -> 579 s). Measured and dropped, over the 72 runs of
// traces-sim.md's grid and the 48 of traces-robust.md (makespan / P50
// summed): the reserve less every owed floor, v1 -1.8 / -2.6 %, v2 0 /
// +0.6 %, without swap +4.3 / +15 % (robust: v1 -2.7 / -11 %, v2 -2.9 /
// -5.2 % and 3 kills -> 0, without swap +6.8 / +5.8 %); less only the
// floors paged-out sandboxes owe, v1 +0.1 / -3.0 %, v2 +1.1 / +0.5 %,
// robust v2 +2.4 / -1.0 % (3 kills -> 1). Neither helps on every host.
func AgentReserve(wfs []trajectory.Workflow, budget int64) int64 {
	var peak float64
	for _, w := range wfs {
		for _, a := range w.Actions {
			if a.Recorded != nil {
				peak = max(peak, a.Recorded.PeakMiB)
			}
		}
	}
	return min(int64(peak*(1<<20)), budget/4)
}

// minScaledPeriod bounds the control period of a compressed replay.
const minScaledPeriod = 20 * time.Millisecond

// ScaledGate puts the gate on the replay's clock: a replay at time scale s
// runs model waits and tool curves s times as long (0.2: five times
// faster), so a tool ramps 1/s times as fast. Table 5's constants are set
// for tools running in real time; left as they are, a compressed replay
// would give the gate a period five times too coarse for the ramps and
// make every denial (Dmin, Dmax) five times as long relative to the work.
// The period, horizon, Dmin, Dmax and T_stable are multiplied by s (the
// period no shorter than 20 ms) and the resident band, a rate, divided by
// it; byte quantities stay. Scale 0 or 1 leaves cfg unchanged.
func ScaledGate(cfg gate.Config, scale float64) gate.Config {
	if scale <= 0 || scale == 1 {
		return cfg
	}
	d := gate.DefaultConfig()
	dur := func(v, def time.Duration) time.Duration {
		if v == 0 {
			v = def
		}
		return time.Duration(float64(v) * scale)
	}
	cfg.Period = max(dur(cfg.Period, d.Period), minScaledPeriod)
	cfg.Horizon = dur(cfg.Horizon, d.Horizon)
	cfg.DMin = dur(cfg.DMin, d.DMin)
	cfg.DMax = dur(cfg.DMax, d.DMax)
	cfg.StableInterval = dur(cfg.StableInterval, d.StableInterval)
	if cfg.ResidentBand == 0 {
		cfg.ResidentBand = d.ResidentBand
	}
	cfg.ResidentBand /= scale
	return cfg
}

// GateConfigFor fills the safety margin S for a budget: Table 5's 256 MiB
// was set for 8–16 GiB hosts; on smaller budgets it would reserve a large
// share of memory, so S is min(256 MiB, budget/8) unless configured.
func GateConfigFor(cfg gate.Config, budget int64) gate.Config {
	if cfg.SafetyMargin == 0 && budget > 0 {
		cfg.SafetyMargin = min(256*gate.MiB, budget/8)
	}
	return cfg.WithDefaults()
}
