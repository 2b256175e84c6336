package zzdeps
import (
	_ "github.com/opencontainers/runc/libcontainer"
	_ "github.com/containerd/cgroups/v3/cgroup1"
	_ "github.com/containerd/cgroups/v3/cgroup2"
	_ "go.etcd.io/bbolt"
	_ "gonum.org/v1/plot/plotter"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/zeebo/xxh3"
)
