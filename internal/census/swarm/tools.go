package swarm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GoplsVersion is the gopls the swarm installs when none is given
// (the newest that builds with this machine's Go).
const GoplsVersion = "v0.23.0"

// EnsureGopls returns the gopls binary of version under cacheDir,
// installing it with `go install golang.org/x/tools/gopls@version` (through
// the Go module proxy) when it is not there yet.
func EnsureGopls(ctx context.Context, cacheDir, version string) (string, error) {
	bin := filepath.Join(cacheDir, "gopls-"+version)
	path := filepath.Join(bin, "gopls")
	if st, err := os.Stat(path); err == nil && st.Mode()&0o111 != 0 {
		return path, nil
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", fmt.Errorf("%w: %w", ErrGopls, err)
	}
	cmd := exec.CommandContext(ctx, goBin(), "install", "golang.org/x/tools/gopls@"+version)
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=-buildvcs=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%w: go install golang.org/x/tools/gopls@%s failed (needs the Go module proxy or a module cache holding it; or pass --gopls PATH): %w\n%s",
			ErrGopls, version, err, tail(out, 800))
	}
	return path, nil
}

// ModuleDir returns the module cache directory of module@version,
// downloading it through the Go module proxy if needed.
func ModuleDir(ctx context.Context, modVersion string) (string, error) {
	cmd := exec.CommandContext(ctx, goBin(), "mod", "download", "-json", modVersion)
	cmd.Dir = os.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var m struct{ Dir, Error string }
	_ = json.Unmarshal(out, &m)
	if err != nil || m.Dir == "" {
		return "", fmt.Errorf("%w: go mod download %s: %v %s %s", ErrRepo, modVersion, err, m.Error, tail(stderr.Bytes(), 400))
	}
	return m.Dir, nil
}

// goEnvVar returns `go env NAME`.
func goEnvVar(name string) string {
	out, err := exec.Command(goBin(), "env", name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
