package containerdtest

import (
	"context"
	"testing"
	"time"

	cri "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestDaemon runs a pod with one container that exits 0 on a containerd
// of its own; CI runs it first, to fetch and cache the binaries.
func TestDaemon(t *testing.T) {
	d := Start(t, "tenon.test/pause:1")
	d.Import(t, BusyboxArchive(t, "tenon.test/pause:1", PauseCmd))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := d.PodConfig("smoke", "uid-smoke", d.CgroupParent+"/pod-smoke", nil)
	pod := d.RunPod(ctx, t, cfg)
	id := d.RunContainer(ctx, t, pod, cfg, Container{Name: "hello", Image: "tenon.test/pause:1", Command: []string{"/bin/sh", "-c", "echo hello"}})
	for {
		st, err := d.Runtime.ContainerStatus(ctx, &cri.ContainerStatusRequest{ContainerId: id})
		if err != nil {
			t.Fatal(err)
		}
		if st.Status.State == cri.ContainerState_CONTAINER_EXITED {
			if st.Status.ExitCode != 0 {
				t.Fatalf("container exited %d (%s)", st.Status.ExitCode, st.Status.Reason)
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("container still %v", st.Status.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
