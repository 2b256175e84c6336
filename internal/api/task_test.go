package api

import "testing"

// TestAgentTaskLabel: an agent's "task" label names its workflow's task
// (what the policy's task reserve shares between agents); without it the
// workflow names none.
func TestAgentTaskLabel(t *testing.T) {
	s := &Server{agents: map[string]*agent{}}
	for _, tc := range []struct {
		labels map[string]string
		want   string
	}{
		{map[string]string{TaskLabel: "django-11099", "team": "x"}, "django-11099"},
		{map[string]string{"team": "x"}, ""},
		{nil, ""},
	} {
		ag := s.addAgent(record{ID: "a", Labels: tc.labels}, false)
		if got := ag.a.Workflow.Task; got != tc.want {
			t.Errorf("labels %v: task %q, want %q", tc.labels, got, tc.want)
		}
		ag.cancel()
	}
}
