package histcheck

import (
	"context"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/testcluster"
)

// A healthy single-NameNode cluster, through the HDFS adapter, must pass;
// this also checks that the adapter's errors classify as the models need
// (absent reads, exists on create, overwrite refused while being written).
// Some writes are Unknown even here: a file deleted and recreated by
// others while its writer is still open fails that writer's close with
// LeaseExpiredException, after its create applied.
func TestRunHDFS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	cl := testcluster.New(t, testcluster.Config{DataNodes: 1, Conf: map[string]string{"dfs.replication": "1"}})
	clients := clientsOf(3, func(int) FS { return NewHDFS(cl.Client("")) })
	rec := NewRecorder(nil)
	cfg := Config{Root: "/histcheck", Keys: 2, Names: 2, Duration: 2 * time.Second, OpTimeout: 20 * time.Second}
	if err := Run(context.Background(), clients, cfg, rec); err != nil {
		t.Fatal(err)
	}
	regOK, nsOK, reg, ns := checkBoth(t, rec)
	if !regOK || !nsOK {
		t.Fatalf("healthy cluster failed the check: %v / %v", reg, ns)
	}
	s := rec.Stats()
	if s[OpRead][OK] == 0 || s[OpCreate][Exists] == 0 || s[OpWrite][OK] == 0 || s[OpRead][Absent] == 0 {
		for _, o := range rec.Operations() {
			if r := o.Output.(Output).Result; r == Failed || r == Unknown {
				t.Logf("%v: %v", o.Input, o.Metadata)
				break
			}
		}
		t.Fatalf("workload did not exercise the cluster as expected: %v", s)
	}
}
