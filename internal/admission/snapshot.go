package admission

// Queued describes one waiting ticket in a Snapshot.
type Queued struct {
	ID       string  `json:"id"`
	PredAvg  int64   `json:"pred_avg_bytes"`
	PredPeak int64   `json:"pred_peak_bytes"`
	Charge   int64   `json:"charge_bytes"` // what it would be charged if admitted now
	WaitingS float64 `json:"waiting_s"`
}

// Status is a point-in-time view of admission for status pages and metrics.
type Status struct {
	Budget      int64    `json:"budget_bytes"`
	MWindow     int64    `json:"m_window_bytes"`
	Level       int64    `json:"level_bytes"` // M_admitted, the logical water level
	Alpha       float64  `json:"alpha"`
	Running     int      `json:"running"`
	Credit      int64    `json:"credit_bytes"` // protected credit of the oldest heavy action
	CreditOwner string   `json:"credit_owner,omitempty"`
	Light       []Queued `json:"light"`
	Heavy       []Queued `json:"heavy"`
}

// Snapshot returns the current status.
func (a *Admitter) Snapshot() Status {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.eventTime()
	a.accrue(now)
	s := Status{Budget: a.cfg.Budget, MWindow: a.cfg.MWindow, Level: a.level, Alpha: a.alpha(),
		Running: a.running, Credit: int64(a.credit)}
	if a.owner != nil {
		s.CreditOwner = a.owner.req.ID
	}
	q := func(ts []*Ticket) []Queued {
		out := make([]Queued, 0, len(ts))
		for _, t := range ts {
			out = append(out, Queued{ID: t.req.ID, PredAvg: t.req.Descriptor.PredAvg,
				PredPeak: t.req.Descriptor.PredPeak, Charge: a.chargeOf(t),
				WaitingS: now.Sub(t.req.Enqueued).Seconds()})
		}
		return out
	}
	s.Light, s.Heavy = q(a.light), q(a.heavy)
	return s
}
