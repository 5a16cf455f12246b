package tasktracker

import (
	"fmt"

	"github.com/stratafs/strata/internal/netaddr"
)

// advertisedHost is the host a TaskTracker names itself by (tracker_<host>:<port>), reports for data-local maps and puts in its shuffle URL (slave.host.name; mapred.tasktracker.dns.interface; its shuffle address; the address toward the JobTracker),
// by netaddr.Advertised's rule, with the key named in its error.
func advertisedHost(configured, iface, bound string, ifaceAddr func(string) (string, error), local func() string) (string, error) {
	h, err := netaddr.Advertised(configured, iface, bound, ifaceAddr, local)
	if err != nil {
		return "", fmt.Errorf("tasktracker: %s=%s: %w", keyDNSInterface, iface, err)
	}
	return h, nil
}
