package memtool

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/trajectory"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    trajectory.MemProfile
		dir     string
		bgFor   time.Duration
		noOwn   bool // --count-own=false
		wantErr string
	}{
		{name: "full", args: []string{"--peak", "512MiB", "--ramp", "2s", "--hold", "1500ms", "--retain", "64M",
			"--retain-for", "3", "--files", "10MiB", "--files-dir", "/tmp/x", "--background", "--background-for", "90s"},
			want: trajectory.MemProfile{PeakMiB: 512, RampS: 2, HoldS: 1.5, RetainMiB: 64, RetainS: 3, FilesMiB: 10, Background: true},
			dir:  "/tmp/x", bgFor: 90 * time.Second},
		{name: "plain seconds and fractions", args: []string{"--peak=1.5GiB", "--ramp=0.25", "--hold=2"},
			want: trajectory.MemProfile{PeakMiB: 1536, RampS: 0.25, HoldS: 2}, dir: DefaultFilesDir},
		{name: "forever", args: []string{"--peak", "1G", "--hold", "forever", "--background-for", "5"},
			want: trajectory.MemProfile{PeakMiB: 1024, HoldS: math.Inf(1)}, dir: DefaultFilesDir, bgFor: 5 * time.Second},
		{name: "tool memory on top", args: []string{"--peak", "16MiB", "--count-own=false"},
			want: trajectory.MemProfile{PeakMiB: 16}, dir: DefaultFilesDir, noOwn: true},
		{name: "retain above peak", args: []string{"--peak", "10MiB", "--retain", "20MiB"}, wantErr: "exceeds peak"},
		{name: "negative size", args: []string{"--peak", "-1MiB"}, wantErr: "negative"},
		{name: "negative duration", args: []string{"--peak", "1MiB", "--ramp", "-2s"}, wantErr: "negative"},
		{name: "negative background-for", args: []string{"--background-for", "-1s"}, wantErr: "negative"},
		{name: "bad unit", args: []string{"--peak", "3XB"}, wantErr: "invalid size"},
		{name: "bad duration", args: []string{"--ramp", "soon"}, wantErr: "invalid duration"},
		{name: "forever ramp", args: []string{"--ramp", "forever"}, wantErr: "invalid duration"},
		{name: "positional", args: []string{"--peak", "1MiB", "extra"}, wantErr: `unexpected argument "extra"`},
		{name: "unknown flag", args: []string{"--pk", "1MiB"}, wantErr: "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := ParseArgs(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidProfile) {
					t.Fatalf("ParseArgs(%q) error = %v, want ErrInvalidProfile containing %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseArgs(%q): %v", tt.args, err)
			}
			if o.Profile != tt.want || o.FilesDir != tt.dir || o.BackgroundFor != tt.bgFor || o.CountOwn == tt.noOwn {
				t.Fatalf("ParseArgs(%q) = %+v dir %q bg %v count own %v; want %+v dir %q bg %v count own %v",
					tt.args, o.Profile, o.FilesDir, o.BackgroundFor, o.CountOwn, tt.want, tt.dir, tt.bgFor, !tt.noOwn)
			}
		})
	}
}

func TestArgsRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		p    trajectory.MemProfile
		head []string
	}{
		{"minimal", trajectory.MemProfile{PeakMiB: 512, RampS: 2, HoldS: 1},
			[]string{"tool", "mem", "--peak", "512MiB", "--ramp", "2s", "--hold", "1s"}},
		{"everything", trajectory.MemProfile{PeakMiB: 100.5, RampS: 0.1, HoldS: 0.25, RetainMiB: 7, RetainS: 4, FilesMiB: 3, Background: true},
			[]string{"tool", "mem", "--peak", "100.5MiB", "--ramp", "0.1s", "--hold", "0.25s", "--retain", "7MiB",
				"--retain-for", "4s", "--files", "3MiB", "--background", "--holder-dir", DefaultHolderDir}},
		{"forever", trajectory.MemProfile{PeakMiB: 16, HoldS: math.Inf(1)},
			[]string{"tool", "mem", "--peak", "16MiB", "--ramp", "0s", "--hold", "forever"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Args(tt.p)
			if !slices.Equal(a, tt.head) {
				t.Fatalf("Args = %q, want %q", a, tt.head)
			}
			o, err := ParseArgs(a[2:])
			if err != nil {
				t.Fatalf("ParseArgs(Args): %v", err)
			}
			if o.Profile != tt.p {
				t.Fatalf("round trip = %+v, want %+v", o.Profile, tt.p)
			}
			if want := map[bool]string{true: DefaultHolderDir}[tt.p.Background]; o.HolderDir != want || !o.CountOwn {
				t.Fatalf("holder dir %q, count own %v; want %q, true", o.HolderDir, o.CountOwn, want)
			}
		})
	}
}
