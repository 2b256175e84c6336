package kube

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ServiceAccountDir is where Kubernetes mounts a pod's service account.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Config says how to reach an API server.
type Config struct {
	// Server is the API server's base URL, e.g. https://10.96.0.1:443.
	Server string
	// TokenFile holds the bearer token; it is read again at every request
	// (projected service-account tokens rotate). Empty: no token.
	TokenFile string
	// CAFile holds the PEM certificates that sign the server's; empty:
	// the system's roots.
	CAFile string
	// Timeout bounds a request that is not a watch; default 30 s.
	Timeout time.Duration
}

// InCluster is the Config of a pod's service account: the server from
// KUBERNETES_SERVICE_HOST and _PORT, token and CA from dir (usually
// ServiceAccountDir). It returns ErrNotInCluster outside a pod.
func InCluster(dir string) (Config, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	token := filepath.Join(dir, "token")
	if host == "" || port == "" {
		return Config{}, ErrNotInCluster
	}
	if _, err := os.Stat(token); errors.Is(err, os.ErrNotExist) {
		return Config{}, ErrNotInCluster
	}
	return Config{
		Server:    "https://" + net.JoinHostPort(host, port),
		TokenFile: token,
		CAFile:    filepath.Join(dir, "ca.crt"),
	}, nil
}

func (c Config) tlsConfig() (*tls.Config, error) {
	if !strings.HasPrefix(c.Server, "https://") && !strings.HasPrefix(c.Server, "http://") {
		return nil, fmt.Errorf("kube: server %q: want an https:// URL", c.Server)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.CAFile == "" {
		return tc, nil
	}
	pem, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("kube: reading the API server's CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("kube: %s holds no PEM certificate", c.CAFile)
	}
	tc.RootCAs = pool
	return tc, nil
}
