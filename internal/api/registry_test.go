package api

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestRegistryListChecksIDs: a record whose id is not an agent id, or
// differs from its key, fails the listing naming it (its id becomes a
// workspace path when the daemon recovers the agent); a good one lists.
func TestRegistryListChecksIDs(t *testing.T) {
	for _, tc := range []struct {
		name, key, id, wantErr string
	}{
		{name: "good", key: "ag-0123456789ab", id: "ag-0123456789ab"},
		{name: "path in the id", key: "ag-0123456789ab", id: "../../etc", wantErr: `"../../etc"`},
		{name: "key and id differ", key: "ag-0123456789ab", id: "ag-ba9876543210", wantErr: "matching its key"},
		{name: "bad key", key: "x/y", id: "x/y", wantErr: `"x/y"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "agents.db")
			r, err := openRegistry(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.close()
			v, _ := json.Marshal(record{V: recordVersion, ID: tc.id, Backend: "fake", Created: time.Unix(0, 0)})
			if err := r.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketAgents).Put([]byte(tc.key), v) }); err != nil {
				t.Fatal(err)
			}
			recs, err := r.list()
			switch {
			case tc.wantErr == "" && (err != nil || len(recs) != 1 || recs[0].ID != tc.id):
				t.Errorf("list = %+v, %v; want the one record", recs, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("list = %+v, %v; want an error naming %s", recs, err, tc.wantErr)
			}
		})
	}
}
