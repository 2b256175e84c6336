//go:build linux

package process

import (
	"context"
	"io"
	"log/slog"
	"sync"

	"github.com/sirupsen/logrus"
)

var quietOnce sync.Once

// quietLibcontainer routes libcontainer's logrus messages to slog's default
// logger at debug level instead of stderr. The one it logs in tenon's use
// is a warning that it could not read the OOM-kill count of a container
// whose start failed because its cgroup was gone; the start's error reaches
// the caller anyway, and the warning broke the progress bar of every replay.
func quietLibcontainer() {
	quietOnce.Do(func() {
		logrus.SetOutput(io.Discard)
		logrus.AddHook(slogHook{})
	})
}

// slogHook forwards logrus entries to slog.Default: errors at warn level
// (libcontainer forwards runc-init's failures as errors), the rest at debug.
type slogHook struct{}

func (slogHook) Levels() []logrus.Level { return logrus.AllLevels }

func (slogHook) Fire(e *logrus.Entry) error {
	attrs := make([]any, 0, 2*len(e.Data)+2)
	attrs = append(attrs, "logrus_level", e.Level.String())
	for k, v := range e.Data {
		attrs = append(attrs, k, v)
	}
	level := slog.LevelDebug
	if e.Level <= logrus.ErrorLevel {
		level = slog.LevelWarn
	}
	slog.Default().Log(context.Background(), level, "libcontainer: "+e.Message, attrs...)
	return nil
}
