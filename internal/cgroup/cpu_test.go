package cgroup

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestSetCPUQuota(t *testing.T) {
	tests := []struct {
		name          string
		v2            bool
		quota, period time.Duration
		want          map[string]string
		wantQ, wantP  time.Duration
	}{
		{name: "v1 half a cpu", quota: 50 * time.Millisecond, period: 100 * time.Millisecond,
			want: map[string]string{"cpu.cfs_quota_us": "50000", "cpu.cfs_period_us": "100000"}, wantQ: 50 * time.Millisecond, wantP: 100 * time.Millisecond},
		{name: "v1 unlimited, default period", quota: 0,
			want: map[string]string{"cpu.cfs_quota_us": "-1", "cpu.cfs_period_us": "100000"}, wantQ: 0, wantP: 100 * time.Millisecond},
		{name: "v1 tiny quota raised to the kernel minimum", quota: time.Microsecond, period: 10 * time.Millisecond,
			want: map[string]string{"cpu.cfs_quota_us": "1000", "cpu.cfs_period_us": "10000"}, wantQ: time.Millisecond, wantP: 10 * time.Millisecond},
		{name: "v2 two cpus", v2: true, quota: 200 * time.Millisecond, period: 100 * time.Millisecond,
			want: map[string]string{"cpu.max": "200000 100000"}, wantQ: 200 * time.Millisecond, wantP: 100 * time.Millisecond},
		{name: "v2 unlimited", v2: true, quota: -1, period: 50 * time.Millisecond,
			want: map[string]string{"cpu.max": "max 50000"}, wantQ: 0, wantP: 50 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := fakeV1(t)
			if tc.v2 {
				l = fakeV2(t)
			}
			g := mustCreate(t, l, "tenon/sb")
			if err := g.SetCPUQuota(tc.quota, tc.period); err != nil {
				t.Fatal(err)
			}
			for f, w := range tc.want {
				if got := readFile(t, filepath.Join(g.dirs[CPU], f)); got != w {
					t.Errorf("%s = %q, want %q", f, got, w)
				}
			}
			q, p, err := g.CPUQuota()
			if err != nil || q != tc.wantQ || p != tc.wantP {
				t.Errorf("CPUQuota = %v/%v, %v; want %v/%v", q, p, err, tc.wantQ, tc.wantP)
			}
		})
	}
}

func TestParseCPUMax(t *testing.T) {
	tests := []struct {
		name          string
		in            string
		quota, period int64
		wantErr       bool
	}{
		{name: "limited", in: "50000 100000\n", quota: 50000, period: 100000},
		{name: "max", in: "max 100000", quota: -1, period: 100000},
		{name: "garbage quota", in: "lots 100000", wantErr: true},
		{name: "missing period", in: "max", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, p, err := ParseCPUMax(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && (q != tc.quota || p != tc.period) {
				t.Errorf("got %d %d, want %d %d", q, p, tc.quota, tc.period)
			}
		})
	}
}

func TestCPUUsage(t *testing.T) {
	tests := []struct {
		name  string
		v2    bool
		files map[string]string
		want  time.Duration
	}{
		{name: "v1 cpuacct.usage in ns", files: map[string]string{"cpuacct.usage": "1500000000\n"}, want: 1500 * time.Millisecond},
		{name: "v2 cpu.stat usage_usec", v2: true, files: map[string]string{"cpu.stat": "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n"}, want: 2500 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := fakeV1(t)
			if tc.v2 {
				l = fakeV2(t)
			}
			g := mustCreate(t, l, "tenon/sb")
			writeFiles(t, g.dirs[CPUAcct], tc.files)
			got, err := g.CPUUsage()
			if err != nil || got != tc.want {
				t.Errorf("CPUUsage = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestCPUWithoutController(t *testing.T) {
	l := fakeV1(t)
	delete(l.Controllers, CPU)
	delete(l.Controllers, CPUAcct)
	g := mustCreate(t, l, "tenon/sb")
	if err := g.SetCPUQuota(time.Millisecond, 0); !errors.Is(err, ErrNoHierarchy) {
		t.Errorf("SetCPUQuota without cpu = %v, want ErrNoHierarchy", err)
	}
	if _, err := g.CPUUsage(); !errors.Is(err, ErrNoHierarchy) {
		t.Errorf("CPUUsage without cpuacct = %v, want ErrNoHierarchy", err)
	}
}
