//go:build linux

package process

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/sandbox"
)

// BenchmarkCreate measures create-to-ready; each sandbox is destroyed
// outside the timed region.
func BenchmarkCreate(b *testing.B) {
	be, _ := liveBackend(b, 4<<30)
	ctx := context.Background()
	ws := b.TempDir()
	var destroy time.Duration
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("bench-create-%d", i)
		if _, err := be.Create(ctx, sandbox.Spec{ID: id, Workspace: filepath.Join(ws, id)}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		t := time.Now()
		if err := be.Destroy(ctx, id); err != nil {
			b.Fatal(err)
		}
		destroy += time.Since(t)
		b.StartTimer()
	}
	b.ReportMetric(float64(destroy.Microseconds())/float64(b.N)/1000, "destroy-ms/op")
}

// BenchmarkExec measures one action of `true` end to end (the whole cost
// above the program's own run time is overhead).
func BenchmarkExec(b *testing.B) {
	be, _ := liveBackend(b, 4<<30)
	ctx := context.Background()
	id := "bench-exec"
	if _, err := be.Create(ctx, sandbox.Spec{ID: id, Workspace: b.TempDir()}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r, err := be.Exec(ctx, id, sandbox.ExecRequest{Argv: []string{"true"}})
		if err != nil || r.ExitCode != 0 {
			b.Fatalf("exec true: %+v %v", r, err)
		}
	}
}
