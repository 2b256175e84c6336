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
	// Token is a bearer token given inline (a kubeconfig's token); it
	// goes with no TokenFile.
	Token string
	// CAFile holds the PEM certificates that sign the server's; CAData
	// holds them inline. Neither: the system's roots.
	CAFile string
	CAData []byte
	// TLSServerName is the name the server's certificate is checked
	// against; empty: the host of Server.
	TLSServerName string
	// A client certificate and its key, PEM, by file or inline; read once
	// by NewClient.
	CertFile, KeyFile string
	CertData, KeyData []byte
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
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.TLSServerName}
	if c.CertFile != "" || c.CertData != nil {
		cert, key, err := c.clientPair()
		if err != nil {
			return nil, err
		}
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("kube: the client certificate and key: %w", err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	pem, src := c.CAData, "certificate-authority-data"
	if c.CAFile != "" {
		var err error
		if pem, err = os.ReadFile(c.CAFile); err != nil {
			return nil, fmt.Errorf("kube: reading the API server's CA: %w", err)
		}
		src = c.CAFile
	}
	if pem == nil {
		return tc, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("kube: %s holds no PEM certificate", src)
	}
	tc.RootCAs = pool
	return tc, nil
}

// clientPair returns the client certificate's and key's PEM, from their
// files or inline.
func (c Config) clientPair() (cert, key []byte, err error) {
	cert, key = c.CertData, c.KeyData
	if c.CertFile != "" {
		if cert, err = os.ReadFile(c.CertFile); err != nil {
			return nil, nil, fmt.Errorf("kube: reading the client certificate: %w", err)
		}
	}
	if c.KeyFile != "" {
		if key, err = os.ReadFile(c.KeyFile); err != nil {
			return nil, nil, fmt.Errorf("kube: reading the client key: %w", err)
		}
	}
	return cert, key, nil
}
