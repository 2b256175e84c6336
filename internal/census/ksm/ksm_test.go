package ksm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func fakeDir(t *testing.T, vals map[string]int64) string {
	dir := t.TempDir()
	for k, v := range vals {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(strconv.FormatInt(v, 10)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readFile(t *testing.T, dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

var base = map[string]int64{
	"run": 0, "pages_shared": 10, "pages_sharing": 30, "pages_unshared": 5,
	"pages_volatile": 2, "full_scans": 7, "pages_to_scan": 100, "sleep_millisecs": 20,
}

func TestParseValue(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int64
		wantErr bool
	}{
		{name: "newline", in: "42\n", want: 42},
		{name: "negative", in: "-3", want: -3},
		{name: "empty", in: "", wantErr: true},
		{name: "text", in: "always", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseValue(strings.NewReader(tt.in))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("got %d, %v; want %d, err %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestRead(t *testing.T) {
	k := New(fakeDir(t, base))
	s, err := k.Read()
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{PagesShared: 10, PagesSharing: 30, PagesUnshared: 5, PagesVolatile: 2, FullScans: 7}
	if s != want {
		t.Errorf("stats = %+v, want %+v", s, want)
	}
	if s.SavedBytes(4096) != 30*4096 {
		t.Errorf("saved = %d", s.SavedBytes(4096))
	}
	if _, err := New(filepath.Join(t.TempDir(), "none")).Read(); !errors.Is(err, ErrNotSupported) {
		t.Errorf("missing dir: err = %v, want ErrNotSupported", err)
	}
}

func TestStartRestore(t *testing.T) {
	tests := []struct {
		name               string
		set                Settings
		wantScan, wantWake string
	}{
		{name: "keeps unset values", set: Settings{}, wantScan: "100", wantWake: "20"},
		{name: "applies settings", set: Settings{PagesToScan: 5000, SleepMillisecs: 5}, wantScan: "5000", wantWake: "5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := fakeDir(t, base)
			k := New(dir)
			restore, err := k.Start(tt.set)
			if err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, dir, "run"); got != "1" {
				t.Errorf("run = %s, want 1", got)
			}
			if got := readFile(t, dir, "pages_to_scan"); got != tt.wantScan {
				t.Errorf("pages_to_scan = %s, want %s", got, tt.wantScan)
			}
			if got := readFile(t, dir, "sleep_millisecs"); got != tt.wantWake {
				t.Errorf("sleep_millisecs = %s, want %s", got, tt.wantWake)
			}
			if err := restore(); err != nil {
				t.Fatal(err)
			}
			for name, want := range map[string]string{"run": "0", "pages_to_scan": "100", "sleep_millisecs": "20"} {
				if got := readFile(t, dir, name); got != want {
					t.Errorf("after restore %s = %s, want %s", name, got, want)
				}
			}
		})
	}
	dir := fakeDir(t, base)
	if err := New(dir).Stop(); err != nil || readFile(t, dir, "run") != "0" {
		t.Errorf("Stop: %v", err)
	}
}

func TestWaitFullScans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := fakeDir(t, base)
		k := New(dir)
		go func() {
			for i := int64(8); i <= 10; i++ {
				time.Sleep(time.Second)
				// Replace atomically, as sysfs never shows a half-written value.
				tmp := filepath.Join(dir, "full_scans.tmp")
				_ = os.WriteFile(tmp, []byte(strconv.FormatInt(i, 10)), 0o644)
				_ = os.Rename(tmp, filepath.Join(dir, "full_scans"))
			}
		}()
		start := time.Now()
		if err := k.WaitFullScans(context.Background(), 2, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < 2*time.Second || d > 3*time.Second {
			t.Errorf("returned after %v, want about 2 s", d)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := k.WaitFullScans(ctx, 5, 0); !errors.Is(err, ErrTimeout) {
			t.Errorf("err = %v, want ErrTimeout", err)
		}
		synctest.Wait()
	})
}
