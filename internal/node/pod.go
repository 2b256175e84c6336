package node

import (
	"path"
	"strings"
)

// AnnotationAgent marks a pod as an agent whose containers tenon adopts:
// metadata.annotations["tenon.dev/agent"] = "true". Pods without it (or
// with another value) are left to the runtime and kubelet as they are.
const AnnotationAgent = "tenon.dev/agent"

// IsAgent reports whether a pod's annotations mark it as an agent.
func IsAgent(annotations map[string]string) bool {
	v := strings.TrimSpace(strings.ToLower(annotations[AnnotationAgent]))
	return v == "true" || v == "1" || v == "yes"
}

// PodRef names a pod.
type PodRef struct {
	Namespace, Name, UID string
}

func (p PodRef) String() string { return p.Namespace + "/" + p.Name }

// CgroupsPath is where an adopted container's cgroup goes: under the
// domain, named by the container id, as runc's cgroupfs driver takes it
// (absolute, relative to every hierarchy's root).
func CgroupsPath(domain, containerID string) string {
	return "/" + path.Join(strings.Trim(domain, "/"), containerID)
}

// underDomain reports whether a container's cgroups path lies in the
// domain, and returns it relative to the hierarchy roots.
func underDomain(domain, cgroupsPath string) (string, bool) {
	rel := strings.Trim(cgroupsPath, "/")
	d := strings.Trim(domain, "/")
	if strings.Contains(cgroupsPath, ":") || !strings.HasPrefix(rel, d+"/") {
		return "", false
	}
	return rel, true
}
