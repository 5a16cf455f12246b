package namenode

import (
	"fmt"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/ipc"
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

// secureConfig reads the secure-mode settings; in kerberos mode the
// superuser is the user of the NameNode's principal, as in Hadoop
// (HADOOP_USER_NAME plays no part). Nothing is logged in here.
func secureConfig(c *conf.Configuration, cfg *Config) error {
	s, err := ipc.SecureSettingsFrom(c, security.KeyNameNodePrincipal, security.KeyNameNodeKeytab)
	if err != nil {
		return fmt.Errorf("namenode: %w", err)
	}
	cfg.Security = s
	if s.Kerberos && s.Principal != "" {
		if cfg.Superuser, err = s.UserOf(cfg.RPCAddr); err != nil {
			return fmt.Errorf("namenode: %s: %w", security.KeyNameNodePrincipal, err)
		}
	}
	return nil
}

// secureRPC logs the NameNode in from its keytab in kerberos mode and
// makes its RPC server require Kerberos or, when it issues delegation
// tokens, a delegation token (TOKEN, DIGEST-MD5).
func (n *NameNode) secureRPC(rpc *ipc.ServerConfig) error {
	sec, err := ipc.KerberosServer(n.cfg.Security, nil, n.cfg.RPCAddr, n.ns.groups.Groups)
	if err != nil {
		return fmt.Errorf("namenode: %w", err)
	}
	if sec != nil {
		if n.ns.cfg.delegation.Issuing() {
			// TOKEN first, as Hadoop's server lists it: clients holding
			// a delegation token for this NameNode use it.
			tm := &ipc.TokenMechanism{QOPs: n.cfg.Security.QOPs, Retrieve: ipc.DelegationRetriever(n.ns.RetrieveDelegationPassword)}
			sec.SASL.Mechanisms = append([]ipc.SASLMechanism{tm}, sec.SASL.Mechanisms...)
		}
		rpc.SASL = sec.SASL
		n.login = sec.Login
	}
	return nil
}
