package swap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeHost is a fake sysfs/proc/dev tree plus recorded swapon/swapoff calls.
type fakeHost struct {
	t        *testing.T
	root     string
	m        *Manager
	swapons  []string
	swapoffs []string
	probes   int
}

const swapsHeader = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"

func newFakeHost(t *testing.T, withDevice bool) *fakeHost {
	root := t.TempDir()
	h := &fakeHost{t: t, root: root}
	p := Paths{
		SysBlock:    filepath.Join(root, "sys/block"),
		ZramControl: filepath.Join(root, "sys/class/zram-control"),
		ProcSwaps:   filepath.Join(root, "proc/swaps"),
		ProcMounts:  filepath.Join(root, "proc/mounts"),
		Dev:         filepath.Join(root, "dev"),
	}
	h.mkfile("proc/swaps", swapsHeader)
	h.mkfile("proc/mounts", "sysfs /sys sysfs rw 0 0\n")
	h.mkfile("dev/zram0", "")
	if withDevice {
		h.mkfile("sys/block/zram0/disksize", "0\n")
		h.mkfile("sys/block/zram0/comp_algorithm", "[lzo-rle] lzo lz4\n")
		h.mkfile("sys/block/zram0/mm_stat", "0 0 0 0 0 0 0 0 0\n")
		h.mkfile("sys/block/zram0/dev", "253:0\n")
		h.mkfile("sys/block/zram0/reset", "")
		if err := os.MkdirAll(filepath.Join(p.SysBlock, "zram0/holders"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h.m = &Manager{
		Paths: p, Device: "zram0", Priority: DefaultPriority, PageSize: 4096,
		Log:      slog.New(slog.DiscardHandler),
		Modprobe: func(context.Context, string) error { h.probes++; return errors.New("modprobe: not found") },
		Swapon: func(path string, prio int) error {
			h.swapons = append(h.swapons, fmt.Sprintf("%s@%d", path, prio))
			size := h.readInt("sys/block/zram0/disksize")/1024 - 4
			h.mkfile("proc/swaps", fmt.Sprintf("%s/dev/zram0 partition\t%d\t0\t%d\n", swapsHeader, size, prio))
			return nil
		},
		Swapoff: func(path string) error {
			h.swapoffs = append(h.swapoffs, path)
			h.mkfile("proc/swaps", swapsHeader)
			return nil
		},
	}
	return h
}

func (h *fakeHost) mkfile(rel, content string) {
	p := filepath.Join(h.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *fakeHost) read(rel string) string {
	b, err := os.ReadFile(filepath.Join(h.root, rel))
	if err != nil {
		h.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func (h *fakeHost) readInt(rel string) int64 {
	var v int64
	fmt.Sscan(h.read(rel), &v)
	return v
}

// foreignSwap makes zram0 an active swap area labeled by someone else.
func (h *fakeHost) foreignSwap() {
	hdr, err := Header(64<<20, 4096, "other", testUUID)
	if err != nil {
		h.t.Fatal(err)
	}
	h.mkfile("dev/zram0", string(hdr))
	h.mkfile("sys/block/zram0/disksize", "67108864\n")
	h.mkfile("proc/swaps", swapsHeader+"/dev/zram0 partition 65532 0 5\n")
}

func TestEnableDisableFake(t *testing.T) {
	h := newFakeHost(t, true)
	if err := h.m.Enable(context.Background(), 64<<20+123); err != nil {
		t.Fatalf("Enable: %v", err)
	}
	if got := h.read("sys/block/zram0/comp_algorithm"); got != "lz4" {
		t.Errorf("comp_algorithm = %q, want lz4", got)
	}
	if got := h.readInt("sys/block/zram0/disksize"); got != 64<<20 {
		t.Errorf("disksize = %d, want %d (rounded to pages)", got, 64<<20)
	}
	wantOn := filepath.Join(h.root, "dev/zram0") + "@100"
	if len(h.swapons) != 1 || h.swapons[0] != wantOn {
		t.Errorf("swapon calls %q, want [%q]", h.swapons, wantOn)
	}
	st, err := h.m.Status()
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if !st.Present || !st.Active || !st.Ours || st.Swap.Priority != 100 || st.DiskSize != 64<<20 || st.MM == nil {
		t.Fatalf("Status after Enable = %+v", st)
	}
	h.mkfile("sys/block/zram0/reset", "")
	if err := h.m.Disable(context.Background()); err != nil {
		t.Fatalf("Disable: %v", err)
	}
	if len(h.swapoffs) != 1 || h.read("sys/block/zram0/reset") != "1" {
		t.Fatalf("Disable: swapoffs %q, reset %q; want one swapoff and a reset", h.swapoffs, h.read("sys/block/zram0/reset"))
	}
}

func TestEnableRefuses(t *testing.T) {
	tests := []struct {
		name    string
		device  bool
		setup   func(h *fakeHost)
		size    int64
		wantErr error
		probes  int
	}{
		{name: "foreign active swap", device: true, setup: (*fakeHost).foreignSwap, size: 64 << 20, wantErr: ErrForeignSwap},
		{name: "mounted", device: true, size: 64 << 20, wantErr: ErrBusy, setup: func(h *fakeHost) {
			h.mkfile("sys/block/zram0/disksize", "1048576\n")
			h.mkfile("proc/mounts", filepath.Join(h.root, "dev/zram0")+" /mnt ext4 rw 0 0\n")
		}},
		{name: "held", device: true, size: 64 << 20, wantErr: ErrBusy, setup: func(h *fakeHost) {
			h.mkfile("sys/block/zram0/disksize", "1048576\n")
			h.mkfile("sys/block/zram0/holders/dm-0", "")
		}},
		{name: "no zram", device: false, size: 64 << 20, wantErr: ErrNoZram, probes: 1},
		{name: "too small", device: true, size: 4096, wantErr: ErrBadSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost(t, tt.device)
			if tt.setup != nil {
				tt.setup(h)
			}
			err := h.m.Enable(context.Background(), tt.size)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Enable = %v, want %v", err, tt.wantErr)
			}
			if len(h.swapons)+len(h.swapoffs) != 0 || h.probes != tt.probes {
				t.Fatalf("swapon %q swapoff %q probes %d; want none and %d probes", h.swapons, h.swapoffs, h.probes, tt.probes)
			}
		})
	}
}

func TestDisableLeavesForeignSwap(t *testing.T) {
	h := newFakeHost(t, true)
	h.foreignSwap()
	if err := h.m.Disable(context.Background()); !errors.Is(err, ErrForeignSwap) {
		t.Fatalf("Disable = %v, want ErrForeignSwap", err)
	}
	if len(h.swapoffs) != 0 || h.read("sys/block/zram0/reset") != "" {
		t.Fatalf("Disable touched a foreign device: swapoffs %q reset %q", h.swapoffs, h.read("sys/block/zram0/reset"))
	}
}

func TestReEnableOurs(t *testing.T) {
	h := newFakeHost(t, true)
	if err := h.m.Enable(context.Background(), 32<<20); err != nil {
		t.Fatalf("first Enable: %v", err)
	}
	if err := h.m.Enable(context.Background(), 64<<20); err != nil {
		t.Fatalf("second Enable: %v", err)
	}
	if len(h.swapons) != 2 || len(h.swapoffs) != 1 || h.readInt("sys/block/zram0/disksize") != 64<<20 {
		t.Fatalf("swapons %q swapoffs %q disksize %d", h.swapons, h.swapoffs, h.readInt("sys/block/zram0/disksize"))
	}
}

// TestDisableRetriesENOMEM: a swapoff refused with ENOMEM (a memory group
// at its limit) is tried again; one that keeps failing is reported.
func TestDisableRetriesENOMEM(t *testing.T) {
	for _, fails := range []int{2, 100} {
		h := newFakeHost(t, true)
		if err := h.m.Enable(context.Background(), 64<<20); err != nil {
			t.Fatal(err)
		}
		h.m.SwapoffRetry = time.Millisecond
		ok := h.m.Swapoff
		calls := 0
		h.m.Swapoff = func(path string) error {
			calls++
			if calls <= fails {
				return fmt.Errorf("swapoff %s: %w", path, syscall.ENOMEM)
			}
			return ok(path)
		}
		err := h.m.Disable(context.Background())
		switch {
		case fails < swapoffAttempts && (err != nil || calls != fails+1):
			t.Errorf("%d ENOMEM: Disable = %v after %d calls, want success after %d", fails, err, calls, fails+1)
		case fails >= swapoffAttempts && (!errors.Is(err, syscall.ENOMEM) || calls != swapoffAttempts):
			t.Errorf("ENOMEM throughout: Disable = %v after %d calls, want ENOMEM after %d", err, calls, swapoffAttempts)
		}
	}
}
