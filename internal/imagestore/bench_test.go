package imagestore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/tenon-dev/tenon/internal/imagestore"
	"github.com/tenon-dev/tenon/internal/imagestore/imagetest"
)

// BenchmarkFirstUnpack measures the first import of an image of about
// 300 MiB (busybox and 300 files of 1 MiB, the image of
// internal/sandbox/process's BenchmarkCreateToReady) from a `docker save`
// archive into an empty store: reading the archive, decompressing and
// checking each layer, unpacking it, syncing it to disk. The archive is
// written once, before the timed region (its pages may be cached); each
// iteration's store is removed outside it.
func BenchmarkFirstUnpack(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("unpacking layers sets owners: needs root")
	}
	img := imagetest.With(b, imagetest.Busybox(b), imagetest.DataLayer(b, 300, 1<<20, ""))
	tag, err := name.NewTag("bench.test/big:1")
	if err != nil {
		b.Fatal(err)
	}
	archive := filepath.Join(b.TempDir(), "big.tar")
	if err := tarball.WriteToFile(archive, tag, img); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(archive)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		root := filepath.Join(b.TempDir(), "images")
		s, err := imagestore.Open(root)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		ims, err := s.Import(ctx, archive, imagestore.ImportOptions{})
		if err != nil || len(ims) != 1 {
			b.Fatalf("import: %v, %v", ims, err)
		}
		b.StopTimer()
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.RemoveAll(root); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
