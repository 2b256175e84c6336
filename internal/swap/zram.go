package swap

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultPriority is the swap priority Enable uses: above disk swap, which
// the kernel numbers from -2 downwards, and the value zram-generator uses.
const DefaultPriority = 100

// Manager sets up and tears down one zram swap device. The zero value is not
// usable; use NewManager.
type Manager struct {
	Paths    Paths
	Device   string // zram device name, "zram0"
	Priority int    // swap priority, DefaultPriority
	PageSize int    // page size for the swap header, os.Getpagesize()
	Log      *slog.Logger

	// Kernel actions, injectable for tests.
	Modprobe func(ctx context.Context, module string) error
	Swapon   func(path string, prio int) error
	Swapoff  func(path string) error
	// SwapoffRetry is the pause between swapoff attempts that failed with
	// ENOMEM (0: DefaultSwapoffRetry).
	SwapoffRetry time.Duration
}

// swapoffAttempts bounds the swapoff attempts that fail with ENOMEM: the
// kernel reads every page back into the memory group it came from, and one
// at its limit refuses the charge until it has reclaimed.
const swapoffAttempts = 10

// DefaultSwapoffRetry is Manager.SwapoffRetry's default.
const DefaultSwapoffRetry = 500 * time.Millisecond

// NewManager returns a Manager for /dev/zram0 on the default paths.
func NewManager(log *slog.Logger) *Manager {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{
		Paths:    DefaultPaths(),
		Device:   "zram0",
		Priority: DefaultPriority,
		PageSize: os.Getpagesize(),
		Log:      log,
		Modprobe: modprobe,
		Swapon:   Swapon,
		Swapoff:  Swapoff,
	}
}

// Enable makes /dev/zram0 a zram swap device of size bytes (see Manager.Enable).
func Enable(ctx context.Context, size int64, log *slog.Logger) error {
	return NewManager(log).Enable(ctx, size)
}

// Disable turns off and resets tenon's zram swap device (see Manager.Disable).
func Disable(ctx context.Context) error { return NewManager(nil).Disable(ctx) }

// GetStatus reports the state of zram0 and of all swap areas.
func GetStatus() (Status, error) { return NewManager(nil).Status() }

func modprobe(ctx context.Context, module string) error {
	out, err := exec.CommandContext(ctx, "modprobe", module).CombinedOutput()
	if err != nil {
		return fmt.Errorf("modprobe %s: %w: %s", module, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Enable turns the zram device into swap of size bytes (rounded down to whole
// pages) with the manager's priority. If the device is already tenon's
// active swap it is set up again with the new size. It fails with
// ErrForeignSwap if the device is someone else's active swap, ErrBusy if it is
// otherwise in use, and ErrNoZram if there is no zram device. On failure the
// device is left reset and swap off.
func (m *Manager) Enable(ctx context.Context, size int64) error {
	size -= size % int64(m.PageSize)
	if size < minPages*int64(m.PageSize) {
		return fmt.Errorf("%w: %d bytes, want at least %d", ErrBadSize, size, minPages*m.PageSize)
	}
	if err := m.ensureDevice(ctx); err != nil {
		return err
	}
	st, err := m.Status()
	if err != nil {
		return err
	}
	if st.Active {
		if !st.Ours {
			return ErrForeignSwap
		}
		m.Log.Info("zram swap already enabled by tenon; setting it up again", "device", m.Device, "size", size)
		if err := m.Swapoff(m.Paths.node(m.Device)); err != nil {
			return err
		}
	}
	if err := m.resetIfUnused(); err != nil {
		return err
	}
	if err := m.configure(size); err != nil {
		m.reset()
		return err
	}
	if err := m.Swapon(m.Paths.node(m.Device), m.Priority); err != nil {
		m.reset()
		return err
	}
	m.Log.Info("zram swap enabled", "device", m.Device, "size", size, "priority", m.Priority)
	return nil
}

// Disable turns off tenon's zram swap and resets the device. It does nothing
// when the device is absent or not set up by tenon and inactive; it returns
// ErrForeignSwap, touching nothing, when the device is someone else's active
// swap.
func (m *Manager) Disable(ctx context.Context) error {
	st, err := m.Status()
	if err != nil {
		return err
	}
	if !st.Present {
		return nil
	}
	if st.Active && !st.Ours {
		return ErrForeignSwap
	}
	if st.Active {
		if err := m.swapoff(ctx); err != nil {
			return err
		}
	}
	if !st.Ours {
		if st.DiskSize > 0 {
			m.Log.Info("zram device is initialized but not tenon's swap; leaving it", "device", m.Device)
		}
		return nil
	}
	if err := m.reset(); err != nil {
		return err
	}
	m.Log.Info("zram swap disabled", "device", m.Device)
	return nil
}

// ensureDevice makes the zram device exist: modprobe zram, then hot_add.
func (m *Manager) ensureDevice(ctx context.Context) error {
	if _, err := os.Stat(m.Paths.sys(m.Device, "")); err == nil {
		return nil
	}
	if err := m.Modprobe(ctx, "zram"); err != nil {
		m.Log.Debug("loading zram module failed", "err", err)
	}
	if _, err := os.Stat(m.Paths.sys(m.Device, "")); err == nil {
		return nil
	}
	// Reading hot_add creates the lowest free device and prints its number.
	if b, err := os.ReadFile(m.Paths.ZramControl + "/hot_add"); err == nil {
		m.Log.Info("hot-added zram device", "id", strings.TrimSpace(string(b)))
	}
	if _, err := os.Stat(m.Paths.sys(m.Device, "")); err != nil {
		return fmt.Errorf("%w: %s", ErrNoZram, m.Paths.sys(m.Device, ""))
	}
	return nil
}

// resetIfUnused resets an initialized device unless it is mounted or held.
func (m *Manager) resetIfUnused() error {
	size, err := m.readInt("disksize")
	if err != nil || size == 0 {
		return err
	}
	if holders, _ := os.ReadDir(m.Paths.sys(m.Device, "holders")); len(holders) > 0 {
		return fmt.Errorf("%w: %s is held by %s", ErrBusy, m.Device, holders[0].Name())
	}
	f, err := os.Open(m.Paths.ProcMounts)
	if err != nil {
		return fmt.Errorf("reading mounts: %w", err)
	}
	mounted, err := mountedDevice(f, m.Paths.node(m.Device))
	f.Close()
	if err != nil {
		return err
	}
	if mounted {
		return fmt.Errorf("%w: %s is mounted", ErrBusy, m.Paths.node(m.Device))
	}
	return m.reset()
}

// configure picks the compressor, sets the disk size, creates the device
// node if missing and writes the swap header.
func (m *Manager) configure(size int64) error {
	if alg := m.chooseAlgorithm(); alg != "" {
		if err := m.write("comp_algorithm", alg); err != nil {
			m.Log.Warn("setting zram compressor failed; keeping the default", "algorithm", alg, "err", err)
		}
	}
	if err := m.write("disksize", strconv.FormatInt(size, 10)); err != nil {
		return err
	}
	if err := m.ensureNode(); err != nil {
		return err
	}
	disk, err := m.readInt("disksize")
	if err != nil {
		return err
	}
	var uuid [16]byte
	_, _ = rand.Read(uuid[:])
	uuid[6] = uuid[6]&0x0f | 0x40 // version 4
	uuid[8] = uuid[8]&0x3f | 0x80 // RFC 4122 variant
	h, err := Header(disk, m.PageSize, Label, uuid)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(m.Paths.node(m.Device), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", m.Device, err)
	}
	defer f.Close()
	if _, err := f.WriteAt(h, 0); err != nil {
		return fmt.Errorf("writing swap header to %s: %w", m.Device, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing swap header on %s: %w", m.Device, err)
	}
	return f.Close()
}

func (m *Manager) chooseAlgorithm() string {
	f, err := os.Open(m.Paths.sys(m.Device, "comp_algorithm"))
	if err != nil {
		return ""
	}
	defer f.Close()
	avail, _, err := ParseCompAlgorithm(f)
	if err != nil {
		return ""
	}
	return pickAlgorithm(avail, "zstd", "lz4")
}

// ensureNode creates /dev/zramN from sysfs's major:minor when udev did not.
func (m *Manager) ensureNode() error {
	node := m.Paths.node(m.Device)
	if _, err := os.Stat(node); err == nil {
		return nil
	}
	b, err := os.ReadFile(m.Paths.sys(m.Device, "dev"))
	if err != nil {
		return fmt.Errorf("reading device number of %s: %w", m.Device, err)
	}
	var major, minor uint32
	if _, err := fmt.Sscanf(strings.TrimSpace(string(b)), "%d:%d", &major, &minor); err != nil {
		return fmt.Errorf("parsing device number %q of %s: %w", b, m.Device, err)
	}
	if err := mknodBlock(node, major, minor); err != nil {
		return fmt.Errorf("creating %s: %w", node, err)
	}
	return nil
}

// reset writes the device's reset file, which frees its memory.
func (m *Manager) reset() error {
	err := m.write("reset", "1")
	if errors.Is(err, syscall.EBUSY) {
		return fmt.Errorf("%w: resetting %s: %w", ErrBusy, m.Device, err)
	}
	return err
}

func (m *Manager) write(file, v string) error {
	if err := os.WriteFile(m.Paths.sys(m.Device, file), []byte(v), 0o644); err != nil {
		return fmt.Errorf("setting %s %s=%s: %w", m.Device, file, v, err)
	}
	return nil
}

func (m *Manager) readInt(file string) (int64, error) {
	b, err := os.ReadFile(m.Paths.sys(m.Device, file))
	if err != nil {
		return 0, fmt.Errorf("reading %s %s: %w", m.Device, file, err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parsing %s %s %q: %w", m.Device, file, strings.TrimSpace(string(b)), err)
	}
	return v, nil
}

// swapoff turns the device's swap off, trying again while it fails with
// ENOMEM (see swapoffAttempts).
func (m *Manager) swapoff(ctx context.Context) error {
	pause := m.SwapoffRetry
	if pause <= 0 {
		pause = DefaultSwapoffRetry
	}
	var err error
	for range swapoffAttempts {
		if err = m.Swapoff(m.Paths.node(m.Device)); !errors.Is(err, syscall.ENOMEM) {
			return err
		}
		m.Log.Info("swapoff: a memory group refused its pages back; trying again", "err", err)
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(pause):
		}
	}
	return err
}
