package residency

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// fakeHost keeps each sandbox as two temp directories (writable layer and
// workspace) and adopts restored directories by renaming them.
type fakeHost struct {
	root string

	mu         sync.Mutex
	n          int
	boxes      map[string]*fakeBox
	procs      map[string][]ProcInfo // by agent id
	workingSet map[string]int64      // by agent id
	created    []Spec
	destroyed  []string // sandbox ids in destroy order
	createErr  func(n int, spec Spec) error
	readyErr   func(id string) error
	destroyErr func(id string) error
	pathsHook  func() // called outside the lock at the start of Paths
}

type fakeBox struct {
	agent, upper, ws string
}

func newFakeHost(root string) *fakeHost {
	return &fakeHost{root: root, boxes: map[string]*fakeBox{}, procs: map[string][]ProcInfo{}, workingSet: map[string]int64{}}
}

var errNoBox = errors.New("fake: no such sandbox")

func (h *fakeHost) Create(_ context.Context, spec Spec) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	h.created = append(h.created, spec)
	if h.createErr != nil {
		if err := h.createErr(h.n, spec); err != nil {
			return "", err
		}
	}
	id := fmt.Sprintf("sb-%d", h.n)
	b := &fakeBox{agent: spec.AgentID, upper: filepath.Join(h.root, id, "upper"), ws: filepath.Join(h.root, id, "ws")}
	if err := os.MkdirAll(filepath.Join(h.root, id), 0o755); err != nil {
		return "", err
	}
	for _, x := range [][2]string{{spec.UpperFrom, b.upper}, {spec.WorkspaceFrom, b.ws}} {
		var err error
		if x[0] != "" {
			err = os.Rename(x[0], x[1])
		} else {
			err = os.Mkdir(x[1], 0o755)
		}
		if err != nil {
			return "", err
		}
	}
	h.boxes[id] = b
	return id, nil
}

func (h *fakeHost) box(id string) (*fakeBox, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.boxes[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", errNoBox, id)
	}
	return b, nil
}

func (h *fakeHost) Ready(_ context.Context, id string) error {
	if _, err := h.box(id); err != nil {
		return err
	}
	h.mu.Lock()
	f := h.readyErr
	h.mu.Unlock()
	if f != nil {
		return f(id)
	}
	return nil
}

func (h *fakeHost) Paths(_ context.Context, id string) (string, string, error) {
	if h.pathsHook != nil {
		h.pathsHook()
	}
	b, err := h.box(id)
	if err != nil {
		return "", "", err
	}
	return b.upper, b.ws, nil
}

func (h *fakeHost) Procs(_ context.Context, id string) ([]ProcInfo, error) {
	b, err := h.box(id)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.procs[b.agent], nil
}

func (h *fakeHost) WorkingSet(_ context.Context, id string) (int64, error) {
	b, err := h.box(id)
	if err != nil {
		return 0, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.workingSet[b.agent], nil
}

func (h *fakeHost) Destroy(_ context.Context, id string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.destroyErr != nil {
		if err := h.destroyErr(id); err != nil {
			return err
		}
	}
	if _, ok := h.boxes[id]; !ok {
		return fmt.Errorf("%w: %s", errNoBox, id)
	}
	delete(h.boxes, id)
	h.destroyed = append(h.destroyed, id)
	return os.RemoveAll(filepath.Join(h.root, id))
}

func (h *fakeHost) List(context.Context) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for id := range h.boxes {
		out = append(out, id)
	}
	sort.Strings(out)
	return out, nil
}

func (h *fakeHost) live() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.boxes)
}

// fakePager is a fake host with the page-out capability: it records the
// page-outs and page-ins in order and which sandboxes are frozen.
type fakePager struct {
	*fakeHost

	pmu    sync.Mutex
	calls  []string // "out <id>" / "in <id>"
	frozen map[string]bool
	ratio  float64 // 0: unknown
	outErr error
	// outGate, when set, holds every PageOut (the sandbox already
	// frozen) until it is closed.
	outGate chan struct{}
	// wholeErr, when set, is PageInWhole's error: the sandbox stays
	// frozen, its memory not back.
	wholeErr error
}

func newFakePager(h *fakeHost) *fakePager { return &fakePager{fakeHost: h, frozen: map[string]bool{}} }

func (p *fakePager) PageOut(_ context.Context, id string) (PageStats, error) {
	if _, err := p.box(id); err != nil {
		return PageStats{}, err
	}
	ws, _ := p.WorkingSet(context.Background(), id)
	p.pmu.Lock()
	defer p.pmu.Unlock()
	p.calls = append(p.calls, "out "+id)
	p.frozen[id] = true
	if g := p.outGate; g != nil {
		p.pmu.Unlock()
		<-g
		p.pmu.Lock()
	}
	if p.outErr != nil {
		return PageStats{}, p.outErr
	}
	return PageStats{MemoryBefore: ws, MemoryAfter: ws / 10, Bytes: ws * 8 / 10, Duration: 10 * time.Millisecond}, nil
}

func (p *fakePager) PageIn(_ context.Context, id string) (PageStats, error) {
	if _, err := p.box(id); err != nil {
		return PageStats{}, err
	}
	ws, _ := p.WorkingSet(context.Background(), id)
	p.pmu.Lock()
	defer p.pmu.Unlock()
	p.calls = append(p.calls, "in "+id)
	p.frozen[id] = false
	return PageStats{MemoryBefore: ws / 10, MemoryAfter: ws, Bytes: ws * 8 / 10, Duration: 20 * time.Millisecond}, nil
}

func (p *fakePager) PageInWhole(ctx context.Context, id string) (PageStats, error) {
	p.pmu.Lock()
	err := p.wholeErr
	p.pmu.Unlock()
	if err != nil {
		return PageStats{}, err
	}
	return p.PageIn(ctx, id)
}

func (p *fakePager) CompressionRatio() (float64, bool) {
	p.pmu.Lock()
	defer p.pmu.Unlock()
	return p.ratio, p.ratio > 0
}

func (p *fakePager) callLog() []string {
	p.pmu.Lock()
	defer p.pmu.Unlock()
	return append([]string(nil), p.calls...)
}

// thaw is the backend's Resume of a frozen sandbox.
func (p *fakePager) thaw(id string) {
	p.pmu.Lock()
	defer p.pmu.Unlock()
	p.frozen[id] = false
}

func (p *fakePager) isFrozen(id string) bool {
	p.pmu.Lock()
	defer p.pmu.Unlock()
	return p.frozen[id]
}
