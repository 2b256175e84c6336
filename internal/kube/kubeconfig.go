package kube

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// kubeconfig is the part of a kubeconfig file (kind: Config, v1) that
// LoadKubeconfig reads; the fields it refuses are there to be refused.
type kubeconfig struct {
	CurrentContext string `yaml:"current-context"`
	Contexts       []struct {
		Name    string
		Context struct{ Cluster, User string }
	}
	Clusters []struct {
		Name    string
		Cluster kubeCluster
	}
	Users []struct {
		Name string
		User kubeUser
	}
}

// kubeCluster is a kubeconfig's cluster.
type kubeCluster struct {
	Server                   string
	CertificateAuthority     string `yaml:"certificate-authority"`
	CertificateAuthorityData string `yaml:"certificate-authority-data"`
	TLSServerName            string `yaml:"tls-server-name"`
	InsecureSkipTLSVerify    bool   `yaml:"insecure-skip-tls-verify"`
	ProxyURL                 string `yaml:"proxy-url"`
}

// kubeUser is a kubeconfig's user.
type kubeUser struct {
	Token                 string
	TokenFile             string `yaml:"tokenFile"`
	ClientCertificate     string `yaml:"client-certificate"`
	ClientCertificateData string `yaml:"client-certificate-data"`
	ClientKey             string `yaml:"client-key"`
	ClientKeyData         string `yaml:"client-key-data"`
	Username, Password    string
	Exec                  any
	AuthProvider          any    `yaml:"auth-provider"`
	As                    string `yaml:"as"`
}

// LoadKubeconfig reads the kubeconfig file at path (YAML or JSON, as
// kubectl writes it) and returns the Config of its current context: the
// cluster's server, certificate-authority(-data) and tls-server-name; the
// user's token, tokenFile, or client-certificate(-data) with
// client-key(-data). Relative file names are relative to the file's
// directory, as in kubectl. It refuses, with what to use instead, what
// the node agent's client does not do: exec and auth-provider plugins,
// basic auth, impersonation, proxies and insecure-skip-tls-verify.
// One file: KUBECONFIG's lists of files to merge are not read.
func LoadKubeconfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("kube: reading kubeconfig: %w", err)
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(b, &kc); err != nil {
		return Config{}, fmt.Errorf("kube: kubeconfig %s: %w", path, err)
	}
	cfg, err := kc.config(filepath.Dir(path))
	if err != nil {
		return Config{}, fmt.Errorf("kube: kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// config is kc's current context as a Config; dir resolves relative file
// names.
func (kc *kubeconfig) config(dir string) (Config, error) {
	if kc.CurrentContext == "" {
		return Config{}, errors.New("no current-context: set one (kubectl config use-context NAME --kubeconfig FILE)")
	}
	ci := -1
	for i, c := range kc.Contexts {
		if c.Name == kc.CurrentContext {
			ci = i
		}
	}
	if ci < 0 {
		return Config{}, fmt.Errorf("current-context %q is not among its contexts", kc.CurrentContext)
	}
	ctx := kc.Contexts[ci].Context
	ki := -1
	for i, c := range kc.Clusters {
		if c.Name == ctx.Cluster {
			ki = i
		}
	}
	if ki < 0 {
		return Config{}, fmt.Errorf("context %q: no cluster %q", kc.CurrentContext, ctx.Cluster)
	}
	cfg, err := clusterConfig(ctx.Cluster, kc.Clusters[ki].Cluster, dir)
	if err != nil {
		return Config{}, err
	}
	for _, u := range kc.Users {
		if u.Name == ctx.User {
			return userConfig(cfg, u.Name, u.User, dir)
		}
	}
	if ctx.User != "" {
		return Config{}, fmt.Errorf("context %q: no user %q", kc.CurrentContext, ctx.User)
	}
	return cfg, nil
}

// clusterConfig is the Config of the cluster name, without credentials.
func clusterConfig(name string, cl kubeCluster, dir string) (Config, error) {
	switch {
	case cl.InsecureSkipTLSVerify:
		return Config{}, fmt.Errorf("cluster %q: insecure-skip-tls-verify is not supported: give the cluster's certificate-authority", name)
	case cl.ProxyURL != "":
		return Config{}, fmt.Errorf("cluster %q: proxy-url is not supported: reach the API server directly", name)
	case cl.Server == "":
		return Config{}, fmt.Errorf("cluster %q has no server", name)
	case cl.CertificateAuthority != "" && cl.CertificateAuthorityData != "":
		return Config{}, fmt.Errorf("cluster %q: certificate-authority and certificate-authority-data both given: keep one", name)
	}
	cfg := Config{Server: cl.Server, CAFile: resolve(dir, cl.CertificateAuthority), TLSServerName: cl.TLSServerName}
	if cl.CertificateAuthorityData != "" {
		var err error
		if cfg.CAData, err = decodeData("cluster "+name+": certificate-authority-data", cl.CertificateAuthorityData); err != nil {
			return Config{}, err
		}
	}
	return cfg, nil
}

// userConfig completes cfg with the credentials of the user name.
func userConfig(cfg Config, name string, u kubeUser, dir string) (Config, error) {
	unsupported := func(what string) error {
		return fmt.Errorf("user %q: %s is not supported: give a token, tokenFile or client certificate and key (a service account's token: kubectl create token)", name, what)
	}
	switch {
	case u.Exec != nil:
		return Config{}, unsupported("an exec credential plugin")
	case u.AuthProvider != nil:
		return Config{}, unsupported("an auth-provider")
	case u.Username != "" || u.Password != "":
		return Config{}, unsupported("basic authentication (username, password)")
	case u.As != "":
		return Config{}, unsupported("impersonation (as)")
	case u.ClientCertificate != "" && u.ClientCertificateData != "", u.ClientKey != "" && u.ClientKeyData != "":
		return Config{}, fmt.Errorf("user %q: a client certificate or key given both by file and as data: keep one", name)
	}
	cfg.Token, cfg.TokenFile = u.Token, resolve(dir, u.TokenFile)
	cfg.CertFile, cfg.KeyFile = resolve(dir, u.ClientCertificate), resolve(dir, u.ClientKey)
	var err error
	if u.ClientCertificateData != "" {
		if cfg.CertData, err = decodeData("user "+name+": client-certificate-data", u.ClientCertificateData); err != nil {
			return Config{}, err
		}
	}
	if u.ClientKeyData != "" {
		if cfg.KeyData, err = decodeData("user "+name+": client-key-data", u.ClientKeyData); err != nil {
			return Config{}, err
		}
	}
	hasCert, hasKey := cfg.CertFile != "" || cfg.CertData != nil, cfg.KeyFile != "" || cfg.KeyData != nil
	if hasCert != hasKey {
		return Config{}, fmt.Errorf("user %q: a client certificate needs its key and a key its certificate", name)
	}
	return cfg, nil
}

// resolve makes a kubeconfig's relative file name relative to its
// directory.
func resolve(dir, name string) string {
	if name == "" || filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(dir, name)
}

// decodeData decodes a kubeconfig's base64 *-data field.
func decodeData(what, s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("%s: not base64: %w", what, err)
	}
	return b, nil
}
