//go:build linux

package process

import (
	"path"

	"github.com/opencontainers/cgroups"
	devconfig "github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/specconv"
	"golang.org/x/sys/unix"

	"github.com/tenon-dev/tenon/internal/sandbox"

	// The devices cgroup manager; without it libcontainer refuses device rules.
	_ "github.com/opencontainers/cgroups/devices"
)

// exeMount is where the tenon executable appears in every sandbox.
const exeMount = "/usr/local/bin/tenon"

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
	etc        string         // host directory bound read-only at /etc (etc.go)
	etcBinds   []etcBind      // host entries bound into /etc
	hosts      string         // host file bound at /etc/hosts
	resolvConf string         // host file bound at /etc/resolv.conf; "" for none
	binds      []sandbox.Bind // Spec.Binds, sources resolved
	// image says the rootfs is an imported image's overlay: no system
	// directory nor generated /etc is bound; rt (bound at rtMount from the
	// mount points in rtDir) runs the executor.
	image bool
	rt    hostRuntime
	rtDir string
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
	if !s.image {
		for _, d := range s.system {
			if d.target == "" {
				mounts = append(mounts, roBind(d.path, d.path))
			}
		}
		mounts = append(mounts, roBind(s.etc, "/etc"))
		for _, e := range s.etcBinds {
			mounts = append(mounts, roBind(e.src, e.dst))
		}
	}
	mounts = append(mounts, roBind(s.hosts, "/etc/hosts"))
	if s.resolvConf != "" {
		mounts = append(mounts, roBind(s.resolvConf, "/etc/resolv.conf"))
	}
	if s.image {
		mounts = append(mounts, roBind(s.rtDir, rtMount), roBind(s.exe, rtMount+"/tenon"))
		if s.rt.interp != "" {
			mounts = append(mounts, roBind(s.rt.interp, rtMount+"/"+path.Base(s.rt.interp)))
			for name, p := range s.rt.libs {
				mounts = append(mounts, roBind(p, rtMount+"/lib/"+name))
			}
			// The image's /usr/local/bin stays; only tenon is added.
			mounts = append(mounts, roBind(s.rtDir+".sh", exeMount))
		} else {
			mounts = append(mounts, roBind(s.exe, exeMount))
		}
	} else {
		mounts = append(mounts, roBind(s.localBin, path.Dir(exeMount)), roBind(s.exe, exeMount))
	}
	mounts = append(mounts,
		&configs.Mount{
			Source: s.workspace, Destination: "/workspace", Device: "bind",
			Flags: unix.MS_BIND | unix.MS_NOSUID | unix.MS_NODEV,
		},
	)
	for _, b := range s.binds {
		if b.ReadOnly {
			mounts = append(mounts, roBind(b.Source, b.Target))
			continue
		}
		mounts = append(mounts, &configs.Mount{
			Source: b.Source, Destination: b.Target, Device: "bind",
			Flags: unix.MS_BIND | unix.MS_NOSUID | unix.MS_NODEV,
		})
	}

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
			Bounding: sandbox.Capabilities(), Effective: sandbox.Capabilities(), Permitted: sandbox.Capabilities(),
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
