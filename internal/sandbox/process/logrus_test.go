//go:build linux

package process

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
)

// TestQuietLibcontainer: libcontainer's logrus warnings go to slog at debug
// level, not to stderr.
func TestQuietLibcontainer(t *testing.T) {
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })

	quietLibcontainer()
	logrus.WithError(errors.New("openat2 memory.oom_control: no such file or directory")).Warn("unable to get oom kill count")
	logrus.Error("runc init failed")
	if logrus.StandardLogger().Out != io.Discard {
		t.Errorf("logrus still writes to %v", logrus.StandardLogger().Out)
	}
	got := buf.String()
	for _, want := range []string{"level=DEBUG", "libcontainer: unable to get oom kill count", "logrus_level=warning", "no such file",
		"level=WARN msg=\"libcontainer: runc init failed\" logrus_level=error"} {
		if !strings.Contains(got, want) {
			t.Errorf("slog output %q lacks %q", got, want)
		}
	}
}
