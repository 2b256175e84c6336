package cgroup

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParsePressure(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Pressure
		wantErr bool
	}{
		{name: "some and full", in: "some avg10=1.50 avg60=0.75 avg300=0.10 total=12345\nfull avg10=0.50 avg60=0.25 avg300=0.00 total=678\n",
			want: Pressure{Some10: 1.5, Some60: 0.75, Full10: 0.5, Full60: 0.25, SomeTotal: 12345 * time.Microsecond, FullTotal: 678 * time.Microsecond}},
		{name: "some only (cpu-style file)", in: "some avg10=3.00 avg60=2.00 avg300=1.00 total=1\n", want: Pressure{Some10: 3, Some60: 2, SomeTotal: time.Microsecond}},
		{name: "a total past 32 bits", in: "some avg10=0.00 avg60=0.00 avg300=0.00 total=98765432101\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
			want: Pressure{SomeTotal: 98765432101 * time.Microsecond}},
		{name: "bad total", in: "some avg10=0.00 avg60=0.00 avg300=0.00 total=-5\n", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "unknown line", in: "most avg10=1\n", wantErr: true},
		{name: "bad number", in: "some avg10=x avg60=0 avg300=0 total=0\n", wantErr: true},
		{name: "bad field", in: "some avg10\n", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePressure(strings.NewReader(tc.in))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestMemoryPressure(t *testing.T) {
	const host = "some avg10=9.00 avg60=8.00 avg300=7.00 total=1\nfull avg10=6.00 avg60=5.00 avg300=4.00 total=1\n"
	const own = "some avg10=1.00 avg60=2.00 avg300=3.00 total=1\nfull avg10=0.10 avg60=0.20 avg300=0.30 total=1\n"
	const us = time.Microsecond
	tests := []struct {
		name     string
		v2       bool
		groupPSI bool
		want     Pressure
	}{
		{name: "v1 reads the host", want: Pressure{Some10: 9, Some60: 8, Full10: 6, Full60: 5, SomeTotal: us, FullTotal: us, Host: true}},
		{name: "v2 reads the group", v2: true, groupPSI: true, want: Pressure{Some10: 1, Some60: 2, Full10: 0.1, Full60: 0.2, SomeTotal: us, FullTotal: us}},
		{name: "v2 without group PSI falls back to the host", v2: true, want: Pressure{Some10: 9, Some60: 8, Full10: 6, Full60: 5, SomeTotal: us, FullTotal: us, Host: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := fakeV1(t)
			if tc.v2 {
				l = fakeV2(t)
			}
			writeFiles(t, filepath.Join(l.ProcRoot, "pressure"), map[string]string{"memory": host})
			g := mustCreate(t, l, "tenon/sb")
			if tc.groupPSI {
				writeFiles(t, g.dirs[Memory], map[string]string{"memory.pressure": own})
			}
			got, err := g.MemoryPressure()
			if err != nil || got != tc.want {
				t.Errorf("MemoryPressure = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestMemoryPressureWithoutPSI(t *testing.T) {
	g := mustCreate(t, fakeV1(t), "tenon/sb")
	if _, err := g.MemoryPressure(); err == nil {
		t.Error("MemoryPressure with no PSI anywhere succeeded")
	}
}
