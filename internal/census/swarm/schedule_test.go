package swarm

import (
	"slices"
	"testing"
	"time"
)

func TestSchedule(t *testing.T) {
	tests := []struct {
		name    string
		scale   float64
		want    []time.Duration
		wantErr bool
	}{
		{name: "seed", scale: 1, want: []time.Duration{15 * time.Second, time.Minute, 5 * time.Minute, 10 * time.Minute}},
		{name: "tenth", scale: 0.1, want: []time.Duration{1500 * time.Millisecond, 6 * time.Second, 30 * time.Second, time.Minute}},
		{name: "rounded to ms", scale: 0.0001, want: []time.Duration{2 * time.Millisecond, 6 * time.Millisecond, 30 * time.Millisecond, 60 * time.Millisecond}},
		{name: "zero", scale: 0, wantErr: true},
		{name: "negative", scale: -1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Schedule(tt.scale)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Schedule(%v) = %v, want %v", tt.scale, got, tt.want)
			}
		})
	}
}
