package kube

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/clock/clocktest"
)

type fakeStatus struct {
	mu      sync.Mutex
	patches []int
	err     error
}

func (f *fakeStatus) PatchNodeSlots(_ context.Context, node string, n int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.patches = append(f.patches, n)
	return nil
}

func TestPublisherPublishesOnChangeAndResync(t *testing.T) {
	clk := clocktest.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := &fakeStatus{}
	slots := 5
	p := NewPublisher(PublisherConfig{Node: "n", Status: st, Slots: func() int { return slots }, Resync: time.Minute, Clock: clk})
	ctx := context.Background()
	if _, ok := p.Published(); ok {
		t.Error("published before the first Sync")
	}
	p.Sync(ctx) // first: published
	clk.Advance(time.Second)
	p.Sync(ctx) // unchanged: not published
	slots = 3
	p.Sync(ctx) // changed: published
	slots = -2
	p.Sync(ctx) // negative: published as 0
	clk.Advance(30 * time.Second)
	p.Sync(ctx) // unchanged, before the resync
	clk.Advance(31 * time.Second)
	p.Sync(ctx) // resync
	if want := []int{5, 3, 0, 0}; !slices.Equal(st.patches, want) {
		t.Errorf("patches %v, want %v", st.patches, want)
	}
	st.err = errors.New("forbidden")
	slots = 9
	p.Sync(ctx)
	if n, _ := p.Published(); n != 0 || p.Failures() != 1 {
		t.Errorf("after a failed patch: published %d, failures %d", n, p.Failures())
	}
	st.err = nil
	p.Sync(ctx) // retried at the next poll
	if n, _ := p.Published(); n != 9 {
		t.Errorf("published %d after the retry, want 9", n)
	}
}
