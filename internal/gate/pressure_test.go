package gate

import "testing"

func TestClassify(t *testing.T) {
	cfg := DefaultConfig()
	const budget = 1000 * MiB // red region 125 MiB, yellow region up to 250 MiB
	th := cfg.ThresholdsFor(budget)
	if th.Red != 125*MiB || th.Yellow != 250*MiB {
		t.Fatalf("thresholds = %+v, want red 125 MiB, yellow 250 MiB", th)
	}
	tests := []struct {
		name       string
		avail, rPr int64
		want       Pressure
	}{
		{"ample headroom no growth", 900 * MiB, 0, Green},
		{"exactly at yellow boundary is green", 250 * MiB, 0, Green},
		{"just below yellow boundary", 250*MiB - 1, 0, Yellow},
		{"projected growth pushes into yellow", 400 * MiB, 200 * MiB, Yellow},
		{"projected growth pushes into red", 400 * MiB, 300 * MiB, Red},
		{"current memory alone in red", 100 * MiB, 0, Red},
		{"exactly at red boundary is yellow", 125 * MiB, 0, Yellow},
		{"red has priority over yellow", 200 * MiB, 100 * MiB, Red},
		{"projection beyond available", 50 * MiB, 900 * MiB, Red},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := th.Classify(tt.avail, tt.rPr); got != tt.want {
				t.Errorf("Classify(%d MiB, %d MiB) = %v, want %v", tt.avail/MiB, tt.rPr/MiB, got, tt.want)
			}
		})
	}
}

func TestThresholdsConfigurable(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RedFraction, cfg.YellowFraction = 0.05, 0.20
	th := cfg.ThresholdsFor(1000 * MiB)
	if th.Red != 50*MiB || th.Yellow != 250*MiB {
		t.Fatalf("thresholds = %+v, want red 50 MiB, yellow 250 MiB", th)
	}
	if got := (Config{}).ThresholdsFor(0); got != (Thresholds{}) {
		t.Errorf("unlimited budget thresholds = %+v, want zero", got)
	}
	if got := (Thresholds{}).Classify(0, 1); got != Red {
		t.Errorf("unlimited budget with negative projection = %v, want red", got)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name  string
		mod   func(*Config)
		valid bool
	}{
		{"zero value takes defaults", func(*Config) {}, true},
		{"alpha above one", func(c *Config) { c.Alpha = 1.5 }, false},
		{"bmax below b0", func(c *Config) { c.B0, c.BMax = 3, 2 }, false},
		{"dmax below dmin", func(c *Config) { c.DMin, c.DMax = 2e9, 1e9 }, false},
		{"regions above budget", func(c *Config) { c.RedFraction, c.YellowFraction = 0.6, 0.5 }, false},
		{"negative margin", func(c *Config) { c.SafetyMargin = -1 }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Config
			tt.mod(&c)
			if err := c.Validate(); (err == nil) != tt.valid {
				t.Errorf("Validate() = %v, want valid=%v", err, tt.valid)
			}
		})
	}
	if d := (Config{}).WithDefaults(); d != DefaultConfig() {
		t.Errorf("WithDefaults of zero = %+v, want Table 5", d)
	}
}
