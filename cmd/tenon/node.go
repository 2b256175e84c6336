package main

import (
	"context"
	"errors"
	"os"

	"github.com/tenon-dev/tenon/internal/app"
	"github.com/tenon-dev/tenon/internal/kube"
	"github.com/tenon-dev/tenon/internal/node"
	"github.com/tenon-dev/tenon/internal/units"
)

func init() {
	register(&command{name: "node", summary: "run as a Kubernetes node agent: adopt agent pods' containers through the runtime's NRI and run tenon's policy over them", run: runNode})
}

func runNode(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "node", "",
		"Run tenon as the node agent of a Kubernetes node (an NRI plugin of containerd or CRI-O).",
		`Pods annotated `+node.AnnotationAgent+`: "true" are agents. When the runtime creates one of
their containers, tenon moves its cgroup under the workload domain (--domain,
cgroupfs driver), whose memory limit is --budget; when it starts, the gate
watches it like one of tenon's own sandboxes: under memory pressure it freezes
the growing containers (cgroup freezer) and thaws them when memory is back,
and the OOM hold makes allocations at the budget wait instead of being killed
until nothing progresses. Every OOM kill in an adopted container is classified
(its own limits.memory, the node's agent budget, or the host) and reported per
pod: in the log, in /metrics and /status (--listen). Other pods are not touched.

What each policy needs:
  gate   (default) nothing more: the gate and the OOM hold over every adopted
         container.
  tenon  an agent's harness that calls the harness API on --listen (POST
         /v1/pods/NS/NAME/actions before each action, .../actions/ID/done
         after it, .../wait around model waits): agent pacing at its first
         action and admission of each action; --state-dir for the
         predictor's measurements. With an API server the node's agent
         slots are published as `+kube.SlotsResource+` on its status
         (--node-name), and under pressure idle restart-safe agents'
         agent-sandbox Sandboxes are suspended; their harness's next action
         request resumes them. Agents whose harness never calls the API get
         the gate alone.

The API server, one of:
  --kube-in-cluster   the pod's service account (in the DaemonSet, deploy/node)
  --kubeconfig FILE   a kubeconfig file's current context (a node agent run
                      outside a pod): its server and CA, and a token, a token
                      file or a client certificate; exec and auth-provider
                      plugins are not supported
  --kube-server URL   with --kube-token-file and --kube-ca-file

Needs root, the cgroup and NRI socket mounts, and NRI enabled in the runtime
(containerd: [plugins."io.containerd.nri.v1.nri"] disable = false).
SIGTERM thaws what the gate froze and disarms the OOM hold; the containers run
on and are re-adopted at the next start. See docs/kubernetes.md.`)
	socket := fs.String("nri-socket", node.DefaultNRISocket, "the runtime's NRI socket")
	domain := fs.String("domain", "tenon-node", "name of the workload domain cgroup the agent containers go under")
	budget := units.Size(0)
	fs.Var(&budget, "budget", "memory budget of the agent pods on this node, e.g. 48GiB (required)")
	pol := fs.String("policy", "gate", "policy: gate (the gate alone) or tenon (gate, admission, residency; needs a harness: see above)")
	stateDir := fs.String("state-dir", "", "directory of the predictor's measurements and models (required with --policy tenon)")
	listen := fs.String("listen", "127.0.0.1:9464", `serve /metrics, /status, /healthz and the harness API on this TCP address ("" for none)`)
	token := fs.String("token", os.Getenv("TENON_TOKEN"), "bearer token the harness API requires (default $TENON_TOKEN; none: keep --listen where only harnesses reach it)")
	inCluster := fs.Bool("kube-in-cluster", false, "reach the API server with the pod's service account")
	kubeconfig := fs.String("kubeconfig", "", "reach the API server as this kubeconfig file's current context says (see above)")
	server := fs.String("kube-server", "", "reach the API server at this https:// URL (with --kube-token-file, --kube-ca-file)")
	tokenFile := fs.String("kube-token-file", "", "bearer token file for --kube-server")
	caFile := fs.String("kube-ca-file", "", "PEM file of the CA that signs --kube-server's certificate (default: the system's)")
	nodeName := fs.String("node-name", os.Getenv("NODE_NAME"), "this node's name, for the API server (default $NODE_NAME)")
	if err := parseFlags(env, fs, args); err != nil {
		return err
	}
	kc, err := kubeConfig(*inCluster, *kubeconfig, kube.Config{Server: *server, TokenFile: *tokenFile, CAFile: *caFile})
	if err != nil {
		return err
	}
	return app.Node(ctx, app.NodeConfig{NRISocket: *socket, Domain: *domain, Budget: int64(budget), Policy: *pol,
		StateDir: *stateDir, Kube: kc, NodeName: *nodeName, Listen: *listen, Token: *token, Status: env.stderr, Log: env.log})
}

// kubeConfig is the API server's configuration from the --kube-* and
// --kubeconfig flags, nil when none is given.
func kubeConfig(inCluster bool, kubeconfig string, explicit kube.Config) (*kube.Config, error) {
	given := 0
	for _, set := range []bool{inCluster, kubeconfig != "", explicit.Server != ""} {
		if set {
			given++
		}
	}
	switch {
	case given > 1:
		return nil, errors.New("node: give one of --kube-in-cluster, --kubeconfig and --kube-server")
	case kubeconfig != "":
		c, err := kube.LoadKubeconfig(kubeconfig)
		if err != nil {
			return nil, err
		}
		return &c, nil
	case inCluster:
		c, err := kube.InCluster(kube.ServiceAccountDir)
		if err != nil {
			return nil, err
		}
		return &c, nil
	case explicit.Server != "":
		return &explicit, nil
	case explicit.TokenFile != "" || explicit.CAFile != "":
		return nil, errors.New("node: --kube-token-file and --kube-ca-file go with --kube-server")
	}
	return nil, nil
}
