package store

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/tenon-dev/tenon/internal/archive"
	bolt "go.etcd.io/bbolt"
)

func openTest(t *testing.T) (*Store, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tenon.db")
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, p
}

func rec(agent string, gen uint64, digests ...string) Record {
	r := Record{
		WorkflowID: "wf-" + agent, AgentID: agent, Generation: gen, NextAction: int(gen) + 1, Attempt: 1,
		BaseImage: "host",
		Runtime:   RuntimeConfig{Env: []string{"A=1"}, Labels: map[string]string{"k": "v"}, Network: true},
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	for i, d := range digests {
		name := ArtifactUpper
		if i == 1 {
			name = ArtifactWorkspace
		}
		r.Artifacts = append(r.Artifacts, Artifact{Name: name, Ref: archive.Ref{Digest: d, Size: 10, Files: 2}})
	}
	return r
}

func TestRecordsPersistAcrossReopen(t *testing.T) {
	s, p := openTest(t)
	for g := uint64(1); g <= 3; g++ {
		if err := s.PutRecord(rec("a1", g, "sha256:u", "sha256:w")); err != nil {
			t.Fatal(err)
		}
	}
	agent := Agent{ID: "a1", WorkflowID: "wf-a1", State: StateAbsent, NextAction: 4, Attempt: 1, Generation: 3,
		UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := s.PutAgent(agent); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LatestRecord("a1"); !errors.Is(err, ErrClosed) {
		t.Errorf("after close: err = %v, want ErrClosed", err)
	}
	s2, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.LatestRecord("a1")
	if err != nil {
		t.Fatal(err)
	}
	if want := rec("a1", 3, "sha256:u", "sha256:w"); !reflect.DeepEqual(got, want) {
		t.Errorf("latest = %+v, want %+v", got, want)
	}
	if ref, ok := got.Artifact(ArtifactWorkspace); !ok || ref.Digest != "sha256:w" {
		t.Errorf("workspace artifact = %+v, %v", ref, ok)
	}
	ga, err := s2.GetAgent("a1")
	if err != nil || !reflect.DeepEqual(ga, agent) {
		t.Errorf("agent = %+v, %v; want %+v", ga, err, agent)
	}
	all, _ := s2.Records("a1")
	if len(all) != 3 || all[0].Generation != 1 || all[2].Generation != 3 {
		t.Errorf("records = %+v", all)
	}
}

func TestPutRecordErrors(t *testing.T) {
	s, _ := openTest(t)
	if err := s.PutRecord(rec("a", 5)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		r    Record
		want error
	}{
		{"same generation", rec("a", 5), ErrStaleGeneration},
		{"older generation", rec("a", 4), ErrStaleGeneration},
		{"no agent", Record{Generation: 1}, ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.PutRecord(tc.r); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if r, _ := s.LatestRecord("a"); r.Generation != 5 {
		t.Errorf("latest generation = %d, want 5", r.Generation)
	}
	if _, err := s.LatestRecord("nobody"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown agent: err = %v, want ErrNotFound", err)
	}
}

func TestCommitFaultInjection(t *testing.T) {
	s, _ := openTest(t)
	boom := errors.New("injected commit failure")
	var ops []string
	s.SetBeforeCommit(func(op string) error { ops = append(ops, op); return boom })
	if err := s.PutRecord(rec("a", 1)); !errors.Is(err, boom) {
		t.Fatalf("PutRecord err = %v, want injected", err)
	}
	if err := s.PutAgent(Agent{ID: "a", State: StateAbsent}); !errors.Is(err, boom) {
		t.Fatalf("PutAgent err = %v, want injected", err)
	}
	s.SetBeforeCommit(nil)
	if _, err := s.LatestRecord("a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("record visible after failed commit: %v", err)
	}
	if _, err := s.GetAgent("a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("agent visible after failed commit: %v", err)
	}
	if want := []string{"put record", "put agent"}; !reflect.DeepEqual(ops, want) {
		t.Errorf("hook saw %v, want %v", ops, want)
	}
	if err := s.PutRecord(rec("a", 1)); err != nil {
		t.Errorf("commit after removing the hook: %v", err)
	}
}

func TestUnknownVersion(t *testing.T) {
	tests := []struct {
		name, value string
	}{
		{"future version", `{"v":2,"data":{"id":"x","state":"resident"}}`},
		{"no version", `{"data":{"id":"x"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openTest(t)
			if err := s.db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket(bucketAgents).Put([]byte("x"), []byte(tc.value))
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.GetAgent("x"); !errors.Is(err, ErrUnknownVersion) {
				t.Errorf("GetAgent err = %v, want ErrUnknownVersion", err)
			}
			if _, err := s.ListAgents(); !errors.Is(err, ErrUnknownVersion) {
				t.Errorf("ListAgents err = %v, want ErrUnknownVersion", err)
			}
		})
	}
}

func TestAgentsDeleteAndPrune(t *testing.T) {
	s, _ := openTest(t)
	for _, id := range []string{"b", "a", "c"} {
		if err := s.PutAgent(Agent{ID: id, State: StateResident, SandboxID: "sb-" + id}); err != nil {
			t.Fatal(err)
		}
	}
	for g := uint64(1); g <= 3; g++ {
		if err := s.PutRecord(rec("a", g, "sha256:a"+string(rune('0'+g)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutRecord(rec("b", 1, "sha256:shared")); err != nil {
		t.Fatal(err)
	}
	list, _ := s.ListAgents()
	if len(list) != 3 || list[0].ID != "a" || list[2].ID != "c" {
		t.Errorf("ListAgents = %+v", list)
	}
	gone, err := s.PruneRecords("a", 3)
	if err != nil || len(gone) != 2 || gone[0].Generation != 1 || gone[1].Generation != 2 {
		t.Errorf("PruneRecords = %+v, %v", gone, err)
	}
	refs, _ := s.ReferencedDigests()
	if want := map[string]bool{"sha256:a3": true, "sha256:shared": true}; !reflect.DeepEqual(refs, want) {
		t.Errorf("ReferencedDigests = %v, want %v", refs, want)
	}
	gone, err = s.DeleteAgent("a")
	if err != nil || len(gone) != 1 || gone[0].Generation != 3 {
		t.Errorf("DeleteAgent = %+v, %v", gone, err)
	}
	if _, err := s.GetAgent("a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted agent still there: %v", err)
	}
	if _, err := s.LatestRecord("a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted agent's records still there: %v", err)
	}
	if _, err := s.DeleteAgent("never"); err != nil {
		t.Errorf("deleting unknown agent: %v", err)
	}
	// A new generation sequence may start after deletion.
	if err := s.PutRecord(rec("a", 1)); err != nil {
		t.Errorf("record after delete: %v", err)
	}
}
