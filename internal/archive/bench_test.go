package archive

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// build200MB makes a 200 MiB tree: 200 files of 1 MiB across 10
// directories, half pseudo-random (incompressible), half repetitive text.
func build200MB(b *testing.B) string {
	b.Helper()
	root := b.TempDir()
	text := bytes.Repeat([]byte("def handler(request):\n    return compute(request.args) # tenon\n"), (1<<20)/32)[:1<<20]
	for i := range 200 {
		data := text
		if i%2 == 0 {
			data = randBytes(uint64(i), 1<<20)
		}
		mustWrite(b, filepath.Join(root, fmt.Sprintf("d%02d/f%03d", i%10, i)), data, 0o644)
	}
	syscall.Sync() // keep writeback of the source out of the measurement
	return root
}

// cpuTime is the process's user+system CPU time; on a loaded shared
// machine it is a steadier measure than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkCaptureTree200MB(b *testing.B) {
	src := build200MB(b)
	ctx := context.Background()
	b.SetBytes(200 << 20)
	c0 := cpuTime()
	defer func() { b.ReportMetric((cpuTime()-c0).Seconds()/float64(b.N), "cpu-s/op") }()
	for b.Loop() {
		blobs := b.TempDir()
		if _, _, err := CaptureTree(ctx, src, blobs, TreeOptions{}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(blobs)
		b.StartTimer()
	}
}

func BenchmarkExtractTree200MB(b *testing.B) {
	src := build200MB(b)
	ctx := context.Background()
	blobs := b.TempDir()
	ref, _, err := CaptureTree(ctx, src, blobs, TreeOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(200 << 20)
	c0 := cpuTime()
	defer func() { b.ReportMetric((cpuTime()-c0).Seconds()/float64(b.N), "cpu-s/op") }()
	n := 0
	for b.Loop() {
		dst := filepath.Join(b.TempDir(), fmt.Sprint(n))
		n++
		if _, err := ExtractTree(ctx, blobs, ref, dst); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(dst)
		b.StartTimer()
	}
}
