package namenode

import (
	"errors"
	"sync"
	"testing"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
)

// countingMapping records the names it is asked to resolve.
type countingMapping struct {
	mu    sync.Mutex
	names []string
}

func (c *countingMapping) Resolve(names []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.names = append(c.names, names...)
	out := make([]string, len(names))
	for i := range out {
		out[i] = "/r1"
	}
	return out
}

func (c *countingMapping) Cached(string) (string, bool) { return "", false }

// TestRegisterChecksIncludeBeforeRackLookup: a node outside the include
// list is refused by the address it connects from, before the topology
// mapping runs for it; an admitted node is placed by that address, not
// the one it claims.
func TestRegisterChecksIncludeBeforeRackLookup(t *testing.T) {
	ns, _ := testNS(t)
	topo := &countingMapping{}
	ns.topo = topo
	ns.mu.Lock()
	ns.bm.SetHosts(&blockmgmt.Hosts{Include: []blockmgmt.HostEntry{{Host: "10.0.0.1"}}})
	ns.mu.Unlock()
	err := ns.RegisterDatanode(blockmgmt.Registration{UUID: "dn1", IP: "10.0.0.1", XferPort: 9866}, "192.168.7.7")
	var re *ipc.RemoteError
	if !errors.As(err, &re) || re.Class != classDisallowedDatanode {
		t.Fatalf("registration from outside the include list: %v", err)
	}
	if len(topo.names) != 0 {
		t.Fatalf("rack lookup ran for a refused node: %v", topo.names)
	}
	mustOK(t, ns.RegisterDatanode(blockmgmt.Registration{UUID: "dn1", IP: "10.9.9.9", XferPort: 9866}, "10.0.0.1"))
	if len(topo.names) != 1 || topo.names[0] != "10.0.0.1" {
		t.Fatalf("rack lookup for %v, want the remote address 10.0.0.1", topo.names)
	}
	if got := ns.DatanodeReport(blockmgmt.ReportAll); len(got) != 1 || got[0].IP != "10.0.0.1" || got[0].Rack != "/r1" {
		t.Fatalf("report %+v", got)
	}
}
