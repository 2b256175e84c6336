package residency

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestInflightWaitWhileAdding: waiting while other goroutines keep starting
// work must not panic (a sync.WaitGroup does: "reused before previous Wait
// has returned"), and Wait returns only at a moment nothing ran.
func TestInflightWaitWhileAdding(t *testing.T) {
	var f inflight
	var stop atomic.Bool
	var workers sync.WaitGroup
	for g := 0; g < 2; g++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for !stop.Load() {
				f.Add(1)
				runtime.Gosched()
				f.Done()
			}
		}()
	}
	// Bounded by count and by wall time (2 s): a WaitGroup panics within
	// milliseconds here, and the loop's length asserts nothing.
	for i, end := 0, time.Now().Add(2*time.Second); i < 20000 && time.Now().Before(end); i++ {
		f.Wait()
	}
	stop.Store(true)
	workers.Wait()
	f.Add(1)
	done := make(chan struct{})
	go func() { f.Wait(); close(done) }()
	select {
	case <-done:
		t.Fatal("Wait returned while work ran")
	default:
	}
	f.Done()
	<-done
}
