package vmtest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
)

// Test is one test binary to run in the guest.
type Test struct {
	// Name labels the binary's output and exit status; the binary runs in
	// /vmtest/<Name> in the guest. Letters, digits, '.', '_' and '-'.
	Name string
	// Binary is the host path of a binary built with go test -c (any
	// executable will do). Its shared libraries are copied with it.
	Binary string
	// Args are its arguments, e.g. -test.run=^TestLive -test.v.
	Args []string
	// Env are extra environment variables (KEY=value) for it.
	Env []string
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// Guest output markers, each on a line of its own on the test port.
const (
	markReady = "=== vmtest ready"
	markBegin = "=== vmtest begin "
	markExit  = "=== vmtest exit "
)

// buildInitramfs writes the guest's initramfs: busybox and its applets in
// /usr/bin (bin and sbin are links to usr/bin and usr/sbin), the host files
// asked for (over applets of the same name), the tests and
// the shared libraries of every binary at their host paths (with the host's
// symlinks on the way, e.g. /lib -> usr/lib), the host's ld.so.cache, a
// minimal /etc, the kernel modules (in /vmtest/modules, numbered in load
// order) and the two init stages.
func buildInitramfs(w io.Writer, busybox string, hostFiles, modules []string, tests []Test) error {
	a := newArchive()
	for _, d := range []string{"proc", "sys", "dev", "tmp", "run", "root", "newroot", "usr/sbin", "usr/local/bin", "var/tmp"} {
		perm := os.FileMode(0o755)
		if d == "tmp" || d == "var/tmp" {
			perm = os.ModeSticky | 0o777
		}
		if err := a.dir(d, perm); err != nil {
			return err
		}
	}
	if err := a.chardev("dev/console", 0o600, 5, 1); err != nil {
		return err
	}
	for _, l := range [][2]string{{"bin", "usr/bin"}, {"sbin", "usr/sbin"}} {
		if err := a.symlink(l[0], l[1]); err != nil {
			return err
		}
	}
	if err := a.file("usr/bin/busybox", 0o755, busybox); err != nil {
		return err
	}
	for _, f := range hostFiles {
		if err := a.hostPath(f); err != nil {
			return err
		}
	}
	applets, err := busyboxApplets(busybox)
	if err != nil {
		return err
	}
	for _, ap := range applets {
		if _, ok := a.entries["usr/bin/"+ap]; ok {
			continue // a host file given by name wins over the applet
		}
		if err := a.symlink("usr/bin/"+ap, "busybox"); err != nil {
			return err
		}
	}
	for i, m := range modules {
		if err := a.file(fmt.Sprintf("vmtest/modules/%02d-%s", i, path.Base(m)), 0o644, m); err != nil {
			return err
		}
	}
	bins := append([]string{busybox}, hostFiles...)
	for _, t := range tests {
		if !nameRE.MatchString(t.Name) {
			return fmt.Errorf("vmtest: test name %q: use letters, digits, '.', '_' and '-'", t.Name)
		}
		if err := a.file("vmtest/"+t.Name+"/"+t.Name+".test", 0o755, t.Binary); err != nil {
			return err
		}
		bins = append(bins, t.Binary)
	}
	for _, b := range bins {
		libs, err := sharedLibs(b)
		if err != nil {
			return err
		}
		for _, l := range libs {
			if err := a.hostPath(l); err != nil {
				return err
			}
		}
	}
	if _, err := os.Stat("/etc/ld.so.cache"); err == nil {
		if err := a.file("etc/ld.so.cache", 0o644, "/etc/ld.so.cache"); err != nil {
			return err
		}
	}
	etc := map[string]string{
		"etc/passwd":   "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"etc/group":    "root:x:0:\nnogroup:x:65534:\n",
		"etc/hosts":    "127.0.0.1 localhost vmtest\n::1 localhost\n",
		"etc/hostname": "vmtest\n",
		// The guest has no network; sandboxes with Spec.Network still
		// expect a resolver file to bind.
		"etc/resolv.conf": "nameserver 127.0.0.1\n",
	}
	for p, s := range etc {
		if err := a.bytes(p, 0o644, []byte(s)); err != nil {
			return err
		}
	}
	if err := a.bytes("init", 0o755, []byte(stage1)); err != nil {
		return err
	}
	if err := a.bytes("vmtest/run", 0o755, []byte(stage2(tests))); err != nil {
		return err
	}
	return a.write(w)
}

// stage1 runs on the initramfs: a root the kernel cannot pivot_root away
// from, which container runtimes need. It copies itself to a tmpfs and
// switches there (switch_root empties the initramfs).
const stage1 = `#!/usr/bin/busybox sh
export PATH=/usr/bin
mount -t tmpfs -o mode=0755 root /newroot || exec echo "vmtest: mounting the root tmpfs failed"
for f in /*; do [ "$f" = /newroot ] || cp -a "$f" /newroot/; done
exec switch_root /newroot /vmtest/run
`

// stage2 mounts the kernel file systems and cgroup2, enables the
// controllers for children, runs the tests and powers off.
func stage2(tests []Test) string {
	var b strings.Builder
	b.WriteString(`#!/bin/sh
export PATH=/usr/local/bin:/usr/bin:/usr/sbin HOME=/root TMPDIR=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 shm /dev/shm
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
if [ -b /dev/nvme0n1 ]; then mount -t ext4 /dev/nvme0n1 /tmp && chmod 1777 /tmp; fi
for c in cpu memory io pids; do echo +$c > /sys/fs/cgroup/cgroup.subtree_control; done
hostname vmtest
ip link set lo up
out=/dev/ttyS1
stty -F $out raw -echo
{
echo "` + markReady + `"
echo "vmtest: kernel $(uname -r), $(nproc) cpus, $(grep MemTotal /proc/meminfo)"
echo "vmtest: cgroup.controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
echo "vmtest: cgroup.subtree_control: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
echo "vmtest: /tmp: $(grep ' /tmp ' /proc/mounts || echo 'on the root tmpfs')"
for m in /vmtest/modules/*.ko; do [ -f "$m" ] && echo "vmtest: insmod ${m##*/}: $(insmod "$m" 2>&1 && echo ok)"; done
} > $out
`)
	for _, t := range tests {
		fmt.Fprintf(&b, "cd /vmtest/%s\n", t.Name)
		fmt.Fprintf(&b, "echo '%s%s' > $out\n", markBegin, t.Name)
		b.WriteString("env")
		for _, e := range t.Env {
			b.WriteString(" " + shellQuote(e))
		}
		b.WriteString(" ./" + t.Name + ".test")
		for _, arg := range t.Args {
			b.WriteString(" " + shellQuote(arg))
		}
		b.WriteString(" </dev/null >$out 2>&1\n")
		fmt.Fprintf(&b, "echo \"%s%s $?\" > $out\n", markExit, t.Name)
	}
	b.WriteString("cd /\nsync\npoweroff -f\n")
	return b.String()
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func busyboxApplets(busybox string) ([]string, error) {
	out, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("vmtest: %s --list: %w", busybox, err)
	}
	var applets []string
	for _, f := range strings.Fields(string(out)) {
		if f != "busybox" && nameRE.MatchString(f) {
			applets = append(applets, f)
		}
	}
	return applets, nil
}

// sharedLibs lists the shared libraries bin loads, by ldd; none for a
// static binary.
func sharedLibs(bin string) ([]string, error) {
	cmd := exec.Command("ldd", bin)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && strings.Contains(string(out)+string(ee.Stderr), "not a dynamic executable") {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("vmtest: ldd %s: %w", bin, err)
	}
	return parseLdd(strings.NewReader(string(out)))
}

// parseLdd returns the absolute paths ldd printed, in order.
func parseLdd(r io.Reader) ([]string, error) {
	var libs []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.Contains(line, "statically linked") {
			continue
		}
		if _, after, ok := strings.Cut(line, "=>"); ok {
			line = strings.TrimSpace(after)
		}
		if strings.HasPrefix(line, "not found") {
			return nil, fmt.Errorf("vmtest: ldd: %s", sc.Text())
		}
		p, _, _ := strings.Cut(line, " (")
		if strings.HasPrefix(p, "/") {
			libs = append(libs, p)
		}
	}
	return libs, sc.Err()
}

// hostPath adds the host file p, and every symlink on the way to it, at
// the same paths.
func (a *archive) hostPath(p string) error {
	return a.hostPathDepth(p, 0)
}

func (a *archive) hostPathDepth(p string, depth int) error {
	if depth > 40 {
		return fmt.Errorf("vmtest: initramfs: too many symlinks resolving %s", p)
	}
	parts := strings.Split(clean(p), "/")
	for i := range parts {
		cur := "/" + path.Join(parts[:i+1]...)
		fi, err := os.Lstat(cur)
		if err != nil {
			return fmt.Errorf("vmtest: initramfs: %w", err)
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(cur)
			if err != nil {
				return fmt.Errorf("vmtest: initramfs: %w", err)
			}
			if err := a.symlink(cur, target); err != nil {
				return err
			}
			if !path.IsAbs(target) {
				target = path.Join(path.Dir(cur), target)
			}
			return a.hostPathDepth(path.Join(append([]string{target}, parts[i+1:]...)...), depth+1)
		case i == len(parts)-1:
			if fi.IsDir() {
				return a.dir(cur, fi.Mode().Perm())
			}
			return a.file(cur, fi.Mode().Perm(), cur)
		}
	}
	return nil
}
