package jobtracker

import (
	"fmt"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/security"
)

// The JobTracker's protocols' principals (Hadoop's @KerberosInfo): job
// clients ask tickets for the JobTracker's principal; only TaskTrackers
// may speak InterTrackerProtocol.
func init() {
	jt := security.KeyJobTrackerPrincipal
	ipc.RegisterKerberosInfo(SubmissionProtocol, ipc.KerberosInfo{ServerPrincipalKey: jt})
	ipc.RegisterKerberosInfo(InterTrackerProtocol, ipc.KerberosInfo{ServerPrincipalKey: jt, ClientPrincipalKey: security.KeyTaskTrackerPrincipal})
}

// secureConfig sets cfg up for kerberos mode: Kerberos on the RPC server
// with the JobTracker's keytab, and the login the JobTracker uses as a
// client of the NameNode.
func secureConfig(c *conf.Configuration, cfg *Config) error {
	sec, err := ipc.KerberosServer(c, nil, security.KeyJobTrackerPrincipal, security.KeyJobTrackerKeytab, cfg.Addr, nil)
	if err != nil {
		return fmt.Errorf("jobtracker: %w", err)
	}
	if sec != nil {
		cfg.IPC.SASL = sec.SASL
		cfg.Login = sec.Login
	}
	return nil
}
