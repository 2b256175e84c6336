package kubetest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The control plane the end-to-end tests run against, as
// tools/kube/install.sh puts it into the cache.
const (
	Version    = "v1.37.2"
	SandboxCRD = "agents.x-k8s.io_sandboxes.yaml" // agent-sandbox v0.5.6's, in assets/crds
)

// Tokens of the API server's static token file: the admin stands for the
// cluster's operators, agent-sandbox's controller and the kubelet; the
// node agent (user NodeUser) has only the RBAC the test binds to it.
const (
	adminToken = "tenon-e2e-admin"
	nodeToken  = "tenon-e2e-node"
	NodeUser   = "tenon-node"
)

// Assets returns the directory with kube-apiserver, etcd and the CRDs,
// or skips (fails under TENON_KUBE=require, as in CI) when they are absent.
func Assets(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TENON_KUBE_ASSETS")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Skipf("no home directory for the kube assets cache: %v", err)
		}
		dir = filepath.Join(home, ".cache", "tenon", "kube", Version)
	}
	for _, f := range []string{"kube-apiserver", "etcd", "agent-sandbox-controller", filepath.Join("crds", SandboxCRD)} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			msg := fmt.Sprintf("no %s in %s (kube-apiserver %s, etcd 3.5.16, agent-sandbox v0.5.6's controller and CRD): run tools/kube/install.sh", f, dir, Version)
			if os.Getenv("TENON_KUBE") == "require" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return dir
}

// ControlPlane is an etcd and a kube-apiserver on loopback.
type ControlPlane struct {
	Server, CAFile string
	// AdminTokenFile and NodeTokenFile hold the admin's and the node
	// agent's (NodeUser's) bearer tokens.
	AdminTokenFile, NodeTokenFile string
	// NodeCertFile and NodeKeyFile are a client certificate of NodeUser
	// and its key (PEM), which the API server accepts too.
	NodeCertFile, NodeKeyFile string
	Started                   time.Duration // from starting etcd to the API server ready
}

// freePorts returns n distinct loopback ports free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close() // held until all are chosen: distinct
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// start runs bin with args, its output in dir/name.log, killed at cleanup
// and with the test binary. The returned channel is closed when it exits.
func start(t *testing.T, dir, name, bin string, args ...string) <-chan struct{} {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return run(t, dir, name, cmd)
}

// run starts cmd (which should die with the test binary: Pdeathsig), its
// output in dir/name.log, killed at cleanup. The returned channel is
// closed when it exits.
func run(t *testing.T, dir, name string, cmd *exec.Cmd) <-chan struct{} {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("%s log (tail):\n%s", name, b)
		}
	})
	return done
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// StartControlPlane starts etcd and kube-apiserver (RBAC on, static
// tokens) and waits until the API server is ready.
func StartControlPlane(t *testing.T, assets string) *ControlPlane {
	t.Helper()
	dir := t.TempDir()
	begin := time.Now()
	ports := freePorts(t, 3)
	client, peer, secure := ports[0], ports[1], ports[2]
	clientURL, peerURL := fmt.Sprintf("http://127.0.0.1:%d", client), fmt.Sprintf("http://127.0.0.1:%d", peer)
	start(t, dir, "etcd", filepath.Join(assets, "etcd"),
		"--name=e2e", "--data-dir="+filepath.Join(dir, "etcd"), "--unsafe-no-fsync",
		"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=e2e="+peerURL, "--log-level=warn")

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	writeFile(t, filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
	writeFile(t, filepath.Join(dir, "tokens.csv"), []byte(adminToken+",admin,admin-uid,\"system:masters\"\n"+nodeToken+","+NodeUser+",node-uid\n"))
	writeFile(t, filepath.Join(dir, "admin.token"), []byte(adminToken))
	writeFile(t, filepath.Join(dir, "node.token"), []byte(nodeToken))
	certs := filepath.Join(dir, "certs")
	clientCA, nodeCert, nodeKey := ClientCerts(t, dir, NodeUser)
	exited := start(t, dir, "kube-apiserver", filepath.Join(assets, "kube-apiserver"),
		"--etcd-servers="+clientURL, "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(secure), "--cert-dir="+certs,
		"--token-auth-file="+filepath.Join(dir, "tokens.csv"), "--client-ca-file="+clientCA, "--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24", "--disable-admission-plugins=ServiceAccount",
		"--allow-privileged=true", "--endpoint-reconciler-type=none")

	cp := &ControlPlane{Server: fmt.Sprintf("https://127.0.0.1:%d", secure), CAFile: filepath.Join(certs, "apiserver.crt"),
		AdminTokenFile: filepath.Join(dir, "admin.token"), NodeTokenFile: filepath.Join(dir, "node.token"),
		NodeCertFile: nodeCert, NodeKeyFile: nodeKey}
	deadline := time.Now().Add(2 * time.Minute) // a loaded 2-core machine
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Fatal("kube-apiserver exited")
		case <-time.After(100 * time.Millisecond):
		}
		if _, err := os.Stat(cp.CAFile); err != nil {
			last = err
			continue
		}
		if last = NewAdmin(t, cp).Get("/readyz", nil); last == nil {
			cp.Started = time.Since(begin)
			return cp
		}
	}
	t.Fatalf("kube-apiserver not ready after 2 minutes: %v", last)
	return nil
}
