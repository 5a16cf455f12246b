package datanode

import (
	"fmt"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/security"
)

// secureConfig logs the DataNode in from its keytab in kerberos mode
// (dfs.datanode.kerberos.principal, _HOST the host of its transfer
// address; dfs.datanode.keytab.file): it then speaks to the NameNode as
// that principal, which the NameNode's service authorization requires of
// DatanodeProtocol, and its user is the principal's, not
// HADOOP_USER_NAME.
func secureConfig(c *conf.Configuration, cfg *Config) error {
	sc, err := security.FromConf(c)
	if err != nil || !sc.Kerberos {
		return err
	}
	kc, err := security.Krb5Config()
	if err != nil {
		return err
	}
	sc.Rules.DefaultRealm = kc.LibDefaults.DefaultRealm
	host := cfg.Hostname
	if host == "" {
		host = cfg.XferAddr
	}
	p, err := security.ServerPrincipal(c.Get(security.KeyDataNodePrincipal), host)
	if err != nil {
		return err
	}
	l, err := security.LoginFromKeytabFile(kc, p, c.Get(security.KeyDataNodeKeytab), sc.Rules)
	if err != nil {
		return fmt.Errorf("datanode: %w", err)
	}
	cfg.Login, cfg.User = l, l.User
	cfg.NameNodePrincipal = c.Get(security.KeyNameNodePrincipal)
	return nil
}
