package app

import (
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/tenon-dev/tenon/internal/node"
)

// TestDeployReadinessProbe checks deploy/node's DaemonSet against what
// tenon node serves: its readiness probe's port is the container port
// tenon listens on (--listen), and its path answers 503 until tenon is
// connected to the runtime's NRI and 200 after, without the harness API's
// token (a probe sends none).
func TestDeployReadinessProbe(t *testing.T) {
	b, err := os.ReadFile("../../deploy/node/daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ds struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Name  string
						Args  []string
						Ports []struct {
							Name          string
							ContainerPort int `yaml:"containerPort"`
						}
						ReadinessProbe *struct {
							HTTPGet *struct {
								Path string
								Port any
							} `yaml:"httpGet"`
						} `yaml:"readinessProbe"`
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal(b, &ds); err != nil {
		t.Fatal(err)
	}
	cs := ds.Spec.Template.Spec.Containers
	if len(cs) != 1 || cs[0].ReadinessProbe == nil || cs[0].ReadinessProbe.HTTPGet == nil {
		t.Fatalf("want one container with an httpGet readiness probe: %+v", cs)
	}
	c, probe := cs[0], cs[0].ReadinessProbe.HTTPGet
	port := 0
	switch p := probe.Port.(type) {
	case int:
		port = p
	case string:
		for _, cp := range c.Ports {
			if cp.Name == p {
				port = cp.ContainerPort
			}
		}
	}
	listen := ""
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--listen="); ok {
			listen = v
		}
	}
	_, lport, err := net.SplitHostPort(listen)
	if err != nil || lport != strconv.Itoa(port) || port == 0 {
		t.Fatalf("the probe's port %v (%d) is not --listen's %q", probe.Port, port, listen)
	}

	// tenon node's server, on a free port in place of the DaemonSet's.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var connected atomic.Bool
	stop, err := serveNode(addr, "harness-token", node.New(node.Config{}), &nodeKube{}, prometheus.NewRegistry(), &connected, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	get := func() int {
		resp, err := http.Get("http://" + addr + probe.Path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(); code != http.StatusServiceUnavailable {
		t.Errorf("GET %s before NRI is connected: %d, want 503", probe.Path, code)
	}
	connected.Store(true)
	if code := get(); code != http.StatusOK {
		t.Errorf("GET %s once NRI is connected: %d, want 200 (the DaemonSet's readiness probe)", probe.Path, code)
	}
}
