package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/tenon-dev/tenon/internal/controller"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

var idPattern = regexp.MustCompile(`^ag-[0-9a-f]{12}$`)

// agentOf returns the agent named by the {id} path value.
func (s *Server) agentOf(r *http.Request) (*agent, error) {
	id := r.PathValue("id")
	if !idPattern.MatchString(id) {
		return nil, fmt.Errorf("%w: agent id %q is malformed (want ag-<12 hex digits>)", ErrNotFound, id)
	}
	ag := s.lookup(id)
	if ag == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return ag, nil
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeError(w, ErrShuttingDown)
		return
	}
	body, done, ok := s.body(w, r)
	if !ok {
		return
	}
	defer done()
	req, err := DecodeCreateAgent(body)
	if err != nil {
		writeError(w, err)
		return
	}
	if req.Backend != "" && req.Backend != s.cfg.Backend.Name() {
		writeError(w, fmt.Errorf("%w: backend %q is not served here (this server runs %q)", ErrBadRequest, req.Backend, s.cfg.Backend.Name()))
		return
	}
	img, err := resolveImage(s.cfg.Backend, req.Image)
	if err != nil {
		writeError(w, err)
		return
	}
	if ic, ok := s.cfg.Backend.(imageChecker); ok {
		if err := ic.CheckImage(r.Context(), img); errors.Is(err, sandbox.ErrUnsupportedImage) {
			writeError(w, fmt.Errorf("%w: %w", ErrBadRequest, err))
			return
		} else if err != nil {
			writeError(w, fmt.Errorf("checking image %q: %w", img, err))
			return
		}
	}
	rec := record{
		ID: newAgentID(), Backend: s.cfg.Backend.Name(), Image: img,
		Env: req.Env, Labels: req.Labels, Created: s.cfg.Clock.Now().UTC(),
	}
	dir := s.workspaceDir(rec.ID)
	if err := s.makeWorkspace(rec.ID); err != nil {
		writeError(w, fmt.Errorf("creating workspace: %w", err))
		return
	}
	if err := seed(dir, req); err != nil {
		_ = s.removeWorkspace(rec.ID)
		writeError(w, err)
		return
	}
	if err := s.reg.put(rec); err != nil {
		_ = s.removeWorkspace(rec.ID)
		writeError(w, err)
		return
	}
	s.addAgent(rec, true)
	s.emit(controller.Event{Kind: controller.EventSubmit, Workflow: rec.ID})
	writeJSON(w, http.StatusCreated, CreateAgentResponse{ID: rec.ID})
}

// resolveImage refuses at creation an image the backend is known not to
// provide, instead of failing every action of the agent, and pins it: a
// backend that keeps its own images (sandbox.ImageResolver: the process
// backend, with the image store of `tenon image import`) names it by id
// from then on, so the agent's sandboxes all run the image it was created
// with. Other backends resolve images when a sandbox starts (the docker
// backend is asked at creation too: imageChecker); a missing one fails
// that action with 400 (see runAction).
func resolveImage(be sandbox.Backend, image string) (string, error) {
	ir, ok := be.(sandbox.ImageResolver)
	if !ok {
		return image, nil
	}
	pinned, err := ir.ResolveImage(image)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return pinned, nil
}

// imageChecker is the optional backend capability of saying whether it
// can start a sandbox from an image (the docker backend asks its engine,
// then its image store).
type imageChecker interface {
	CheckImage(ctx context.Context, image string) error
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	out := []Agent{}
	for _, ag := range s.sortedAgents() {
		out = append(out, s.describe(r.Context(), ag))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	ag, err := s.agentOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.describe(r.Context(), ag))
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request) {
	ag, err := s.agentOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	s.mu.Lock()
	delete(s.agents, ag.rec.ID)
	s.mu.Unlock()
	s.waits.forget(ag.rec.ID)
	errRetire := s.retire(r.Context(), ag)
	if ir, ok := s.cfg.Backend.(sandbox.ImageResolver); ok {
		ir.ReleaseImage(imageHolder(ag.rec.ID))
	}
	if err := s.reg.delete(ag.rec.ID); err != nil {
		writeError(w, err)
		return
	}
	if err := s.removeWorkspace(ag.rec.ID); err != nil {
		writeError(w, fmt.Errorf("removing workspace: %w", err))
		return
	}
	if errRetire != nil {
		s.log.Warn("deleting agent", "agent", ag.rec.ID, "err", errRetire)
	}
	w.WriteHeader(http.StatusNoContent)
}

// describe builds the API view of an agent.
func (s *Server) describe(ctx context.Context, ag *agent) Agent {
	out := Agent{
		ID: ag.rec.ID, Backend: ag.rec.Backend, Image: ag.rec.Image, Env: ag.rec.Env, Labels: ag.rec.Labels,
		Created: ag.rec.Created, State: ag.state(s.cfg.Clock.Now(), s.cfg.IdleAfter), Workspace: ag.workspace,
		PredictedWaitS: s.waits.predict(ag.rec.ID).Seconds(),
	}
	ag.mu.Lock()
	out.Sandbox, out.Actions, out.Queued = ag.sandbox, ag.actions, ag.waiting
	ag.mu.Unlock()
	out.Residency = s.residencyOf(ag, out.Sandbox)
	if out.Sandbox != "" {
		if st, err := s.cfg.Backend.Stats(ctx, out.Sandbox); err == nil {
			out.MemBytes = st.Memory
		}
	}
	return out
}

func (s *Server) handleExec(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		writeError(w, ErrShuttingDown)
		return
	}
	ag, err := s.agentOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	body, done, ok := s.body(w, r)
	if !ok {
		return
	}
	defer done()
	req, err := DecodeExec(body)
	if err != nil {
		writeError(w, err)
		return
	}
	resp, err := s.runAction(r.Context(), ag, req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) handleWait(w http.ResponseWriter, r *http.Request) {
	ag, err := s.agentOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	body, done, ok := s.body(w, r)
	if !ok {
		return
	}
	defer done()
	req, err := DecodeWait(body)
	if err != nil {
		writeError(w, err)
		return
	}
	s.modelWait(ag, req.State == "begin")
	w.WriteHeader(http.StatusNoContent)
}

// Model-wait event kinds (the controller has no constants for them yet).
const (
	eventWaitBegin = "wait_begin"
	eventWaitEnd   = "wait_end"
)

// modelWait records the begin or end of a model wait. The first of
// overlapping begins starts the wait residency weighs; the last end learns
// its length and brings the sandbox back (waits.go).
func (s *Server) modelWait(ag *agent, begin bool) {
	now := s.cfg.Clock.Now()
	var began, ended bool
	var length time.Duration
	ag.mu.Lock()
	if begin {
		ag.model++
		if began = ag.model == 1; began {
			ag.waitStart, ag.waitSeen = now, true
		}
	} else if ag.model > 0 {
		ag.model--
		if ended = ag.model == 0; ended {
			length = now.Sub(ag.waitStart)
		}
	}
	sb := ag.sandbox
	ag.mu.Unlock()
	kind := eventWaitEnd
	if begin {
		kind = eventWaitBegin
	}
	s.emit(controller.Event{Kind: kind, Workflow: ag.rec.ID, Sandbox: sb})
	switch {
	case began:
		s.waitBegan(ag)
	case ended:
		s.waitEnded(ag, length)
	}
}
