//go:build linux

package process

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/imagestore/imagetest"
	"github.com/tenon-dev/tenon/internal/sandbox"
)

// BenchmarkCreateToReady measures Create and a first `true` (what
// residency's Ready waits for) on the host image and on an imported image
// of about 300 MiB (busybox and 300 files of 1 MiB), its layers unpacked
// before the timed region. Each sandbox is destroyed outside it.
func BenchmarkCreateToReady(b *testing.B) {
	liveLayout(b)
	needOverlay(b)
	store, _ := imagetest.ImportBusybox(b, "bench.test/busybox:1")
	imagetest.Import(b, store, "bench.test/big:1", imagetest.With(b, imagetest.Busybox(b), imagetest.DataLayer(b, 300, 1<<20, "")))
	be, _ := liveBackend(b, 4<<30, func(c *Config) { c.Images = store })
	ctx := context.Background()
	ws := b.TempDir()
	for _, c := range []struct{ name, image string }{{"host", ""}, {"image-300MiB", "bench.test/big:1"}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				id := fmt.Sprintf("bench-ready-%s-%d", c.name, i)
				if _, err := be.Create(ctx, sandbox.Spec{ID: id, Image: c.image, Workspace: filepath.Join(ws, id)}); err != nil {
					b.Fatal(err)
				}
				if r, err := be.Exec(ctx, id, sandbox.ExecRequest{Argv: []string{"true"}, Cwd: "/"}); err != nil || r.ExitCode != 0 {
					b.Fatalf("true: %+v %v", r, err)
				}
				b.StopTimer()
				if err := be.Destroy(ctx, id); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkIdleSandboxes reports the summed memory (usage, page cache
// included) of 20 idle sandboxes that each read the same 64 MiB of image
// files: all of one image, whose layer directories they share ("shared"),
// and each of its own copy of the image (the same files in a layer of its
// own, "copies"). Run it with -benchtime=1x: one iteration is one
// measurement.
func BenchmarkIdleSandboxes(b *testing.B) {
	const n = 20
	liveLayout(b)
	needOverlay(b)
	store, _ := imagetest.ImportBusybox(b, "bench.test/busybox:1")
	base := imagetest.Busybox(b)
	for i := range n {
		imagetest.Import(b, store, fmt.Sprintf("bench.test/copy:%d", i), imagetest.With(b, base, imagetest.DataLayer(b, 64, 1<<20, fmt.Sprint(i))))
	}
	be, _ := liveBackend(b, 8<<30, func(c *Config) { c.Images = store })
	ctx := context.Background()
	for _, shared := range []bool{true, false} {
		name := map[bool]string{true: "shared", false: "copies"}[shared]
		b.Run(name, func(b *testing.B) {
			for it := 0; b.Loop(); it++ {
				var ids []string
				for i := range n {
					img := fmt.Sprintf("bench.test/copy:%d", i)
					if shared {
						img = "bench.test/copy:0"
					}
					id := fmt.Sprintf("bench-idle-%s-%d-%d", name, it, i)
					if _, err := be.Create(ctx, sandbox.Spec{ID: id, Image: img, Workspace: filepath.Join(b.TempDir(), id)}); err != nil {
						b.Fatal(err)
					}
					ids = append(ids, id)
					if r, err := be.Exec(ctx, id, sandbox.ExecRequest{Shell: "cat /data/* >/dev/null", Cwd: "/"}); err != nil || r.ExitCode != 0 {
						b.Fatalf("reading the image's files: %+v %v", r, err)
					}
				}
				time.Sleep(time.Second) // idle
				var sum int64
				for _, id := range ids {
					st, err := be.Stats(ctx, id)
					if err != nil {
						b.Fatal(err)
					}
					sum += st.Memory
				}
				b.ReportMetric(float64(sum)/(1<<20), "MiB-20-sandboxes")
				b.ReportMetric(float64(sum)/n/(1<<20), "MiB/sandbox")
				for _, id := range ids {
					if err := be.Destroy(ctx, id); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
