package namenode

import (
	"fmt"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/security"
)

// The NameNode's protocols' principals (Hadoop's @KerberosInfo): clients
// ask tickets for the NameNode's principal; only DataNodes may speak
// DatanodeProtocol, only the NameNodes or the superuser NamenodeProtocol
// and the HA protocols.
func init() {
	nn := security.KeyNameNodePrincipal
	ipc.RegisterKerberosInfo(ClientProtocolName, ipc.KerberosInfo{ServerPrincipalKey: nn})
	ipc.RegisterKerberosInfo(DatanodeProtocolName, ipc.KerberosInfo{ServerPrincipalKey: nn, ClientPrincipalKey: security.KeyDataNodePrincipal})
	for _, p := range []string{NamenodeProtocolName, HAServiceProtocolName, RaftAdminProtocolName} {
		ipc.RegisterKerberosInfo(p, ipc.KerberosInfo{ServerPrincipalKey: nn, ClientPrincipalKey: nn, SuperuserMayCall: true})
	}
}

// secureConfig sets cfg up for kerberos mode: the RPC server requires
// Kerberos with the NameNode's keytab, and the superuser is the user of
// the NameNode's principal, as in Hadoop (HADOOP_USER_NAME plays no part).
func secureConfig(c *conf.Configuration, cfg *Config) error {
	sec, err := ipc.KerberosServer(c, nil, security.KeyNameNodePrincipal, security.KeyNameNodeKeytab, cfg.RPCAddr, namespace.NewGroupCache(5*time.Minute).Groups)
	if err != nil {
		return fmt.Errorf("namenode: %w", err)
	}
	if sec != nil {
		cfg.IPC.SASL = sec.SASL
		cfg.Superuser = sec.Login.User
	}
	return nil
}
