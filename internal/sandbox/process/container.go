//go:build linux

package process

import (
	"path"

	"github.com/opencontainers/cgroups"
	devconfig "github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/specconv"
	"golang.org/x/sys/unix"

	// The devices cgroup manager; without it libcontainer refuses device rules.
	_ "github.com/opencontainers/cgroups/devices"
)

// exeMount is where the tenon executable appears in every sandbox.
const exeMount = "/usr/local/bin/tenon"

// capabilities is Docker's default set without CAP_MKNOD: enough for
// package managers (chown, setuid for their helpers) and nothing that
// reaches outside the namespaces.
var capabilities = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_NET_RAW",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
	"CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE",
}

// containerSpec is what one sandbox's libcontainer configuration depends on.
type containerSpec struct {
	id         string
	rootfs     string // host directory, the writable layer
	workspace  string // host directory bound at /workspace
	exe        string // host path of the tenon executable
	localBin   string // host directory bound read-only at /usr/local/bin
	cgroupPath string // relative to the hierarchy roots
	network    bool
	system     []systemDir
}

// containerConfig builds the libcontainer configuration of a sandbox.
func containerConfig(s containerSpec) *configs.Config {
	const noExec = unix.MS_NOEXEC | unix.MS_NOSUID | unix.MS_NODEV
	roBind := func(src, dst string) *configs.Mount {
		return &configs.Mount{
			Source: src, Destination: dst, Device: "bind",
			Flags:   unix.MS_BIND | unix.MS_REC | unix.MS_RDONLY | unix.MS_NODEV,
			RecAttr: &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY},
		}
	}
	mounts := []*configs.Mount{
		{Source: "proc", Destination: "/proc", Device: "proc", Flags: noExec},
		{Source: "tmpfs", Destination: "/dev", Device: "tmpfs", Flags: unix.MS_NOSUID | unix.MS_STRICTATIME, Data: "mode=755,size=65536k"},
		{Source: "devpts", Destination: "/dev/pts", Device: "devpts", Flags: unix.MS_NOSUID | unix.MS_NOEXEC, Data: "newinstance,ptmxmode=0666,mode=0620"},
		{Source: "shm", Destination: "/dev/shm", Device: "tmpfs", Flags: noExec, Data: "mode=1777,size=65536k"},
		{Source: "mqueue", Destination: "/dev/mqueue", Device: "mqueue", Flags: noExec},
		{Source: "sysfs", Destination: "/sys", Device: "sysfs", Flags: noExec | unix.MS_RDONLY},
	}
	for _, d := range s.system {
		if d.target == "" {
			mounts = append(mounts, roBind(d.path, d.path))
		}
	}
	mounts = append(mounts,
		roBind(s.localBin, path.Dir(exeMount)),
		roBind(s.exe, exeMount),
		&configs.Mount{
			Source: s.workspace, Destination: "/workspace", Device: "bind",
			Flags: unix.MS_BIND | unix.MS_NOSUID | unix.MS_NODEV,
		},
	)

	ns := configs.Namespaces{
		{Type: configs.NEWNS}, {Type: configs.NEWUTS}, {Type: configs.NEWIPC},
		{Type: configs.NEWPID}, {Type: configs.NEWCGROUP},
	}
	var networks []*configs.Network
	if !s.network {
		ns = append(ns, configs.Namespace{Type: configs.NEWNET})
		networks = []*configs.Network{{Type: "loopback", Address: "127.0.0.1/0", Gateway: "localhost"}}
	}

	var rules []*devconfig.Rule
	for _, d := range specconv.AllowedDevices {
		rules = append(rules, &d.Rule)
	}
	return &configs.Config{
		Rootfs:     s.rootfs,
		Hostname:   s.id,
		Namespaces: ns,
		Networks:   networks,
		Mounts:     mounts,
		Devices:    specconv.AllowedDevices,
		Capabilities: &configs.Capabilities{
			Bounding: capabilities, Effective: capabilities, Permitted: capabilities,
		},
		NoNewPrivileges: true,
		Cgroups: &cgroups.Cgroup{
			Path:      "/" + s.cgroupPath,
			Resources: &cgroups.Resources{Devices: rules},
		},
		MaskPaths: []string{
			"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
			"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
		},
		ReadonlyPaths: []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"},
	}
}
