package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tenon-dev/tenon/internal/report"
)

// jsonDoc is the results JSON: the headline case's comparison at the top
// level (budget_bytes, oversubscription, lower_bound_s, time_scale and
// results per policy: the report JSON contract, medians over the
// repetitions with their "spread"), then the run's metadata, goals and
// every case, with each repetition's comparison under "reps".
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
	// Reps are the repetitions Comparison is the median of; omitted for one.
	Reps []*report.Comparison `json:"reps,omitempty"`
	// CompleteReps is how many of Reps, the first ones, completed: written
	// for a case with an error (all of them otherwise), whose complete
	// repetitions a resumed run keeps.
	CompleteReps int `json:"complete_reps,omitempty"`
	// Unfinished: a checkpoint's case still in flight (ErrUnfinished).
	Unfinished bool `json:"unfinished,omitempty"`
	// Resumed: taken from an earlier run's results (tenon bench --resume).
	Resumed bool `json:"resumed,omitempty"`
	// ResumedReps: that many of Reps, the first ones, were taken from an
	// earlier run that stopped in this case.
	ResumedReps int `json:"resumed_reps,omitempty"`
	// WorkflowsDigest identifies the case's workflows (WorkflowsDigest).
	WorkflowsDigest string `json:"workflows_digest,omitempty"`
	// Host is the machine the case ran on (Outcome.Host).
	Host string `json:"host,omitempty"`
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
		jc := jsonCase{Case: o.Case, Workflows: len(o.Case.Workflows), WallS: o.Wall.Seconds(), Comparison: o.Comparison,
			Resumed: o.Resumed, ResumedReps: o.ResumedReps, WorkflowsDigest: o.WorkflowsDigest, Host: o.Host}
		if d := WorkflowsDigest(o.Case.Workflows); d != "" {
			jc.WorkflowsDigest = d
		}
		if len(o.Reps) > 1 || o.Err != nil {
			jc.Reps = o.Reps
		}
		if o.Err != nil {
			jc.Error, jc.CompleteReps, jc.Unfinished = o.Err.Error(), o.Complete, errors.Is(o.Err, ErrUnfinished)
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

// ReadJSON reads results written by WriteJSON back: every case with its
// comparison, repetitions, error and wall time, and the best static. The workflows of a
// case are not in the file (a case's Workflows is empty), so what needs them
// (Case.Oversubscription) reads 0; the plots and the goals do not.
func ReadJSON(r io.Reader) (*Results, error) {
	_, res, err := ReadJSONMeta(r)
	return res, err
}

// ReadJSONMeta is ReadJSON that also returns the run's Meta (its Wall
// is not in the file).
func ReadJSONMeta(r io.Reader) (Meta, *Results, error) {
	var doc jsonDoc
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return Meta{}, nil, fmt.Errorf("%w: reading bench json: %v", ErrBadResults, err)
	}
	if doc.Cases == nil {
		return Meta{}, nil, fmt.Errorf("%w: no \"cases\" in the bench json", ErrBadResults)
	}
	res := &Results{Cases: len(doc.Cases), Interrupted: doc.Partial, BestStatic: doc.BestStatic, BestStaticWhy: doc.BestStaticWhy}
	for _, jc := range doc.Cases {
		o := Outcome{Case: jc.Case, Comparison: jc.Comparison, Reps: jc.Reps, Wall: time.Duration(jc.WallS * float64(time.Second)),
			Resumed: jc.Resumed, ResumedReps: jc.ResumedReps, WorkflowsDigest: jc.WorkflowsDigest, Host: jc.Host}
		if len(o.Reps) == 0 && o.Comparison != nil {
			o.Reps = []*report.Comparison{o.Comparison}
		}
		o.Complete = len(o.Reps)
		if jc.Error != "" {
			o.Err, o.Complete = errors.New(jc.Error), min(jc.CompleteReps, len(o.Reps))
			if jc.Unfinished {
				o.Err = fmt.Errorf("%w%s", ErrUnfinished, strings.TrimPrefix(jc.Error, ErrUnfinished.Error()))
			}
		}
		res.Outcomes = append(res.Outcomes, o)
	}
	return doc.Meta, res, nil
}
