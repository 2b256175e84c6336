package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/tenon-dev/tenon/internal/controller"
)

// hub fans events out to subscribers; a subscriber that falls behind
// loses events rather than slowing the server.
type hub struct {
	mu   sync.Mutex
	subs map[chan controller.Event]struct{}
}

func newHub() *hub { return &hub{subs: make(map[chan controller.Event]struct{})} }

func (h *hub) subscribe() chan controller.Event {
	ch := make(chan controller.Event, 256)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch
}

func (h *hub) unsubscribe(ch chan controller.Event) {
	h.mu.Lock()
	delete(h.subs, ch)
	h.mu.Unlock()
}

func (h *hub) publish(e controller.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- e:
		default:
		}
	}
}

// handleEvents streams controller events as server-sent events: one
// "data: {json}" line per event. It ends when the client goes away or the
// server shuts down.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, fmt.Errorf("streaming unsupported"))
		return
	}
	ch := s.hub.subscribe()
	defer s.hub.unsubscribe(ch)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": tenon events\n\n")
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		case e := <-ch:
			b, err := json.Marshal(e)
			if err != nil {
				continue
			}
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.Kind, b); err != nil {
				return
			}
			fl.Flush()
		}
	}
}
