package bench

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/tenon-dev/tenon/internal/report"
)

// jsonDoc is the results JSON: the headline case's comparison at the top
// level (budget_bytes, oversubscription, lower_bound_s, time_scale and
// results per policy: the report JSON contract), then the run's metadata,
// goals and every case.
type jsonDoc struct {
	*report.Comparison
	Meta          Meta       `json:"meta"`
	Partial       bool       `json:"partial"`
	BestStatic    string     `json:"best_static,omitempty"`
	BestStaticWhy string     `json:"best_static_why,omitempty"`
	Goals         []Goal     `json:"goals"`
	Cases         []jsonCase `json:"cases"`
}

type jsonCase struct {
	Case
	Workflows  int                `json:"workflows"`
	Error      string             `json:"error,omitempty"`
	WallS      float64            `json:"wall_s"`
	Comparison *report.Comparison `json:"comparison"`
}

// WriteJSON writes the results as indented JSON.
func WriteJSON(w io.Writer, meta Meta, r *Results) error {
	doc := jsonDoc{Meta: meta, Partial: r.Partial(), BestStatic: r.BestStatic, BestStaticWhy: r.BestStaticWhy, Goals: Goals(r), Cases: []jsonCase{}}
	if h := r.Headline(); h != nil {
		doc.Comparison = h.Comparison
	}
	if doc.Comparison == nil {
		doc.Comparison = &report.Comparison{Results: []report.Metrics{}}
	}
	for _, o := range r.Outcomes {
		jc := jsonCase{Case: o.Case, Workflows: len(o.Case.Workflows), WallS: o.Wall.Seconds(), Comparison: o.Comparison}
		if o.Err != nil {
			jc.Error = o.Err.Error()
		}
		doc.Cases = append(doc.Cases, jc)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing bench json: %w", err)
	}
	return nil
}
