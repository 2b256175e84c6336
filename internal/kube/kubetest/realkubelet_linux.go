package kubetest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// kernelTunables are the sysctls the kubelet's container manager wants
// (pkg/kubelet/cm: vm.overcommit_memory 1, kernel.panic 10,
// kernel.panic_on_oops 1, ...). The kubelet under test sees these values
// in files bind-mounted over /proc/sys in a mount namespace of its own, so
// that with protectKernelDefaults it neither changes the shared host's nor
// refuses to start.
var kernelTunables = map[string]string{
	"vm/overcommit_memory":      "1",
	"vm/panic_on_oom":           "0",
	"kernel/panic":              "10",
	"kernel/panic_on_oops":      "1",
	"kernel/keys/root_maxkeys":  "1000000",
	"kernel/keys/root_maxbytes": "25000000",
}

// StartKubelet runs a real kubelet (v1.37.2, built by tools/kube/install.sh)
// as node's kubelet against cp (as the admin) and the CRI at criSocket,
// whose pods go under cgroupParent (cgroupfs driver: its kubepods, QoS
// and pod cgroups below it; the test removes the parent). It
// leaves the host as it found it: a mount namespace of its own shows it
// the kernel tunables it wants and a tmpfs over /var/log and /var/lib
// (its /var/log/containers links, /var/lib/kubelet/device-plugins), it makes no iptables chains, its state,
// logs and certificates are under a temporary directory, and it serves
// on a free loopback port. It skips when the binary is absent.
func StartKubelet(t *testing.T, assets string, cp *ControlPlane, node, criSocket, cgroupParent string) {
	t.Helper()
	bin := Binary(t, assets, "kubelet")
	dir := t.TempDir()
	f := false
	// cgroupfs under cgroupParent; swap and cgroup v1 allowed (this
	// host's); the kernel tunables checked, not set; no iptables chains;
	// its API anonymous on loopback (the test's only); no image garbage
	// collection (images are imported, never pulled) and no eviction but
	// at 1 MiB left (memory pressure in these tests is tenon's to handle).
	cfg, _ := json.Marshal(map[string]any{
		"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
		"containerRuntimeEndpoint": "unix://" + criSocket,
		"cgroupDriver":             "cgroupfs", "cgroupRoot": cgroupParent,
		"failSwapOn": &f, "failCgroupV1": &f, "protectKernelDefaults": true, "makeIPTablesUtilChains": &f,
		"address": "127.0.0.1", "port": freePorts(t, 1)[0], "readOnlyPort": 0, "healthzPort": 0,
		"authentication":              map[string]any{"anonymous": map[string]any{"enabled": true}, "webhook": map[string]any{"enabled": false}},
		"authorization":               map[string]any{"mode": "AlwaysAllow"},
		"podLogsDir":                  filepath.Join(dir, "pod-logs"),
		"imageGCHighThresholdPercent": 100, "imageGCLowThresholdPercent": 99,
		"evictionHard": map[string]string{"memory.available": "1Mi"},
		"registerNode": true,
	})
	writeFile(t, filepath.Join(dir, "config.json"), cfg)
	makeCgroupRoot(t, cgroupParent)
	var script strings.Builder
	script.WriteString("set -e\nmount -t tmpfs tmpfs /var/log\nmount -t tmpfs tmpfs /var/lib\n")
	for name, v := range kernelTunables {
		fake := filepath.Join(dir, "sysctl-"+strings.ReplaceAll(name, "/", "-"))
		writeFile(t, fake, []byte(v+"\n"))
		script.WriteString("mount --bind " + fake + " /proc/sys/" + name + "\n")
	}
	script.WriteString(`exec "$0" "$@"` + "\n")
	args := []string{"-c", script.String(), bin,
		"--config=" + filepath.Join(dir, "config.json"), "--kubeconfig=" + adminKubeconfig(t, dir, cp),
		"--root-dir=" + filepath.Join(dir, "root"), "--cert-dir=" + filepath.Join(dir, "pki"),
		"--hostname-override=" + node, "--v=2"}
	cmd := exec.Command("/bin/sh", args...)
	// No iptables on its PATH (the host's is in /usr/sbin).
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Unshareflags: syscall.CLONE_NEWNS}
	run(t, dir, "kubelet", cmd)
}

// makeCgroupRoot makes the kubelet's cgroup root on every cgroup v1
// hierarchy (the kubelet requires it), its cpuset's CPUs and memory
// nodes those of the root.
func makeCgroupRoot(t *testing.T, root string) {
	t.Helper()
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*/cgroup.procs")
	for _, procs := range hierarchies {
		h := filepath.Dir(procs)
		if _, err := os.Stat(filepath.Join(h, "cgroup.controllers")); err == nil {
			continue // the v2 hierarchy
		}
		if err := os.MkdirAll(h+root, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if b, err := os.ReadFile(filepath.Join(h, f)); err == nil {
				if err := os.WriteFile(filepath.Join(h+root, f), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
