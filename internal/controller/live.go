package controller

import (
	"sort"
	"sync"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// LiveSet is a concurrency-safe set of live sandboxes keyed by sandbox id;
// drivers keep one and hand its List to policies as Env.Live.
type LiveSet struct {
	mu sync.Mutex
	m  map[string]LiveSandbox
}

// Add records a live sandbox.
func (s *LiveSet) Add(a *Agent, info sandbox.Info) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]LiveSandbox)
	}
	s.m[info.ID] = LiveSandbox{Agent: a, Info: info}
}

// Remove forgets a sandbox; unknown ids are ignored.
func (s *LiveSet) Remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// SetRunning marks whether an action executes in sandbox id; unknown ids
// are ignored.
func (s *LiveSet) SetRunning(id string, running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.m[id]; ok {
		l.Running = running
		s.m[id] = l
	}
}

// Len is the number of live sandboxes.
func (s *LiveSet) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// List returns the live sandboxes sorted by id.
func (s *LiveSet) List() []LiveSandbox {
	s.mu.Lock()
	out := make([]LiveSandbox, 0, len(s.m))
	for _, l := range s.m {
		out = append(out, l)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Info.ID < out[j].Info.ID })
	return out
}
