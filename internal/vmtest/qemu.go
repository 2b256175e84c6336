package vmtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config says what to boot and run.
type Config struct {
	Kernel string // the kernel image (bzImage), e.g. from Kernel.Image
	Tests  []Test // run in order, in one boot
	// HostFiles are host files (executables, with their shared libraries)
	// copied to the same paths in the guest, for tools busybox lacks, e.g.
	// /usr/bin/printenv.
	HostFiles []string
	// Modules are kernel modules (uncompressed .ko files, e.g. from
	// Modules.Files) the guest loads with insmod, in order, before the
	// tests; the runner's preface says how each went.
	Modules   []string
	MemoryMiB int // guest memory; 0 is 2048
	// ScratchMiB, when not 0, gives the guest an ext4 disk of that size
	// (sparse on the host, made with mkfs.ext4) mounted at /tmp, so files
	// the tests write are page cache on a disk file system, as on a real
	// host, not tmpfs memory that only swap could reclaim.
	ScratchMiB int
	CPUs       int // guest CPUs; 0 is 2
	// Accel is "tcg", "kvm", or "" to use KVM only when a probe boot under
	// KVM succeeds (the probe runs once per process), else TCG. The
	// TENON_VM_ACCEL environment variable overrides "".
	Accel string
	// Stream, when set, receives the test port's output as it comes.
	Stream io.Writer
}

// Result is one boot's outcome.
type Result struct {
	Accel   string        // "tcg" or "kvm"
	Ready   time.Duration // from QEMU's start to the guest's test runner
	Elapsed time.Duration // from QEMU's start to its exit
	Preface []string      // the runner's lines before the first test (kernel, controllers)
	Tests   []TestResult  // one per Config.Tests entry the guest reached
	Console string        // the kernel console (ttyS0)
}

// Test returns the result of the named test, or nil when the guest never
// reached it.
func (r *Result) Test(name string) *TestResult {
	for i := range r.Tests {
		if r.Tests[i].Name == name {
			return &r.Tests[i]
		}
	}
	return nil
}

const qemuBinary = "qemu-system-x86_64"

// Run boots cfg.Kernel with an initramfs of cfg.Tests, runs them and
// returns their output. It fails with *UnavailableError when QEMU, busybox
// or ldd is missing, and with an error when the guest never reaches its
// test runner or ctx ends first (the Result then holds what was printed).
// QEMU is killed and the temporary files removed before Run returns.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	qemu, err := exec.LookPath(qemuBinary)
	if err != nil {
		return nil, &UnavailableError{What: qemuBinary, Err: err}
	}
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		return nil, &UnavailableError{What: "busybox", Err: err}
	}
	if _, err := exec.LookPath("ldd"); err != nil {
		return nil, &UnavailableError{What: "ldd", Err: err}
	}
	if cfg.MemoryMiB == 0 {
		cfg.MemoryMiB = 2048
	}
	if cfg.CPUs == 0 {
		cfg.CPUs = 2
	}
	accel := cfg.Accel
	if accel == "" {
		accel = os.Getenv("TENON_VM_ACCEL")
	}
	if accel == "" {
		accel = probeAccel(ctx, qemu, busybox, cfg.Kernel)
	}
	return boot(ctx, qemu, busybox, accel, cfg)
}

func boot(ctx context.Context, qemu, busybox, accel string, cfg Config) (*Result, error) {
	dir, err := os.MkdirTemp("", "tenon-vmtest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	initrd := filepath.Join(dir, "initrd.cpio")
	f, err := os.Create(initrd)
	if err != nil {
		return nil, err
	}
	err = buildInitramfs(f, busybox, cfg.HostFiles, cfg.Modules, cfg.Tests)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	var disk []string
	if cfg.ScratchMiB > 0 {
		img := filepath.Join(dir, "scratch.img")
		if err := makeScratch(ctx, img, cfg.ScratchMiB); err != nil {
			return nil, err
		}
		disk = []string{"-drive", "file=" + img + ",if=none,id=scratch,format=raw", "-device", "nvme,serial=vmtest,drive=scratch"}
	}
	console := filepath.Join(dir, "console.log")
	cpu := "max"
	if accel == "kvm" {
		cpu = "host"
	}
	machine := []string{"-M", "pc,accel=" + accel}
	if accel == "tcg" {
		// One host thread for all vCPUs: under multi-threaded TCG the
		// guest kernel's live code patching (int3-based text_poke) races
		// with the other vCPU and oopses ("Oops: int3" in update_curr, two
		// of five CI runs here).
		machine = []string{"-M", "pc", "-accel", "tcg,thread=single"}
	}
	args := append(machine, []string{
		"-cpu", cpu,
		"-m", strconv.Itoa(cfg.MemoryMiB), "-smp", strconv.Itoa(cfg.CPUs),
		"-kernel", cfg.Kernel, "-initrd", initrd,
		"-append", "console=ttyS0 panic=-1 loglevel=4 rdinit=/init",
		"-nodefaults", "-display", "none", "-no-reboot", "-monitor", "none",
		"-serial", "file:" + console, // ttyS0: the kernel console
		"-serial", "stdio", // ttyS1: the tests
	}...)
	args = append(args, disk...)
	cmd := exec.CommandContext(ctx, qemu, args...)
	killWithParent(cmd)
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	res := &Result{Accel: accel}
	start := time.Now()

	var raw bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 32*1024)
		for {
			n, err := pr.Read(buf)
			if n > 0 {
				chunk := buf[:n]
				from := max(0, raw.Len()-len(markReady))
				raw.Write(chunk)
				if res.Ready == 0 && bytes.Contains(raw.Bytes()[from:], []byte(markReady)) {
					res.Ready = time.Since(start)
				}
				if cfg.Stream != nil {
					cfg.Stream.Write(bytes.ReplaceAll(chunk, []byte("\r"), nil))
				}
			}
			if err != nil {
				return
			}
		}
	}()
	runErr := cmd.Run()
	pw.Close()
	wg.Wait()
	res.Elapsed = time.Since(start)
	if b, err := os.ReadFile(console); err == nil {
		res.Console = string(b)
	}
	g, err := parseGuestOutput(&raw)
	if err != nil {
		return res, err
	}
	res.Preface, res.Tests = g.preface, g.tests
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("vmtest: guest did not finish: %w", ctx.Err())
	case runErr != nil:
		return res, fmt.Errorf("vmtest: %s: %w: %s", qemuBinary, runErr, strings.TrimSpace(stderr.String()))
	case !g.ready:
		return res, errors.New("vmtest: the guest never reached its test runner (see Result.Console)")
	}
	return res, nil
}

// makeScratch makes a sparse ext4 image of mib MiB at img.
func makeScratch(ctx context.Context, img string, mib int) error {
	mkfs, err := exec.LookPath("mkfs.ext4")
	if err != nil {
		return &UnavailableError{What: "mkfs.ext4 (e2fsprogs, for the scratch disk)", Err: err}
	}
	f, err := os.Create(img)
	if err != nil {
		return err
	}
	err = f.Truncate(int64(mib) << 20)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, mkfs, "-q", "-F", "-E", "lazy_itable_init=1,lazy_journal_init=1", img).CombinedOutput(); err != nil {
		return fmt.Errorf("vmtest: mkfs.ext4: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

var (
	probeOnce   sync.Once
	probeResult string
)

// probeAccel boots the kernel under KVM once, with an initramfs that only
// reports back, and returns "kvm" when that works, else "tcg": a /dev/kvm
// of nested virtualization may exist and still fail guest kernels.
func probeAccel(ctx context.Context, qemu, busybox, kernel string) string {
	probeOnce.Do(func() {
		probeResult = "tcg"
		f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
		if err != nil {
			return
		}
		f.Close()
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		res, err := boot(pctx, qemu, busybox, "kvm", Config{Kernel: kernel, MemoryMiB: 256, CPUs: 1})
		if err == nil && res.Ready > 0 {
			probeResult = "kvm"
		}
	})
	return probeResult
}
