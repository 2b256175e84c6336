package admission

// Config are the admission parameters. Zero fields take the defaults
// documented in the package comment.
type Config struct {
	Budget         int64   // logical memory budget, bytes (required)
	MWindow        int64   // admitted level at which charges reach the peak, bytes
	Beta           float64 // protected credit rate of the oldest heavy action, bytes per second
	HeavyThreshold int64   // predicted peak at or above which an action is heavy, bytes
	HeavyRisk      float64 // heavy risk at or above which an action is heavy
}

func (c Config) withDefaults() Config {
	if c.MWindow <= 0 {
		c.MWindow = c.Budget
	}
	if c.Beta <= 0 {
		c.Beta = float64(c.Budget) / 60
	}
	if c.HeavyThreshold <= 0 {
		c.HeavyThreshold = c.Budget / 8
	}
	if c.HeavyRisk <= 0 {
		c.HeavyRisk = 0.5
	}
	return c
}
