package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/sandbox"
	"github.com/tenon-dev/tenon/internal/units"
)

// TestCensusImageSandboxesLive: three sandboxes of one imported image each
// run the image's busybox; the census counts its pages once, as the shared
// read-only layer (the image's lower directories, found from the
// sandboxes' overlays), not once per sandbox as file_same duplicates.
func TestCensusImageSandboxesLive(t *testing.T) {
	state, im := liveImageState(t)
	store, err := OpenImageStore(state)
	if err != nil {
		t.Fatal(err)
	}
	lowers := store.LowerDirs(im)
	store.Close()
	var busybox int64
	for _, d := range lowers {
		if fi, err := os.Stat(filepath.Join(d, "bin/busybox")); err == nil {
			busybox = fi.Size()
		}
	}
	if busybox == 0 {
		t.Fatal("no bin/busybox in the image's layers")
	}
	domain := fmt.Sprintf("tenon-test-app-census-%d", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	be, _, closeBe, err := openBackend(ctx, "process", filepath.Join(state, "run"), state, domain, 512*units.MiB, 0, false, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer closeBe()
	const n = 3
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range n {
		id := fmt.Sprintf("sib-%d", i)
		if _, err := be.Create(ctx, sandbox.Spec{ID: id, Image: "example.test/busybox:1"}); err != nil {
			t.Fatal(err)
		}
		// Reads all of busybox and keeps it mapped (sleep is busybox)
		// until the census is done.
		wg.Go(func() {
			_, _ = be.Exec(ctx, id, sandbox.ExecRequest{Shell: "cat /bin/busybox >/dev/null; sleep 8", Timeout: 20 * time.Second})
		})
	}
	time.Sleep(2 * time.Second)
	res, err := Census(ctx, CensusConfig{Domain: domain, Samples: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	if r.N != n {
		t.Fatalf("census of %d siblings, want %d", r.N, n)
	}
	if r.SharedLayerBytes < busybox/2 {
		t.Errorf("shared layer %s, want at least half of busybox's %s (read in full, mapped by every sibling)",
			units.FormatSize(r.SharedLayerBytes), units.FormatSize(busybox))
	}
	if r.Classes.FileSameContent >= busybox {
		t.Errorf("file_same %s: busybox's pages counted again per sibling (busybox %s)",
			units.FormatSize(r.Classes.FileSameContent), units.FormatSize(busybox))
	}
	if r.HeldByAllBytes < busybox/2 {
		t.Errorf("held by all %s, want busybox's mapped pages (%s) among them", units.FormatSize(r.HeldByAllBytes), units.FormatSize(busybox))
	}
}
