package datanode

import (
	"fmt"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/security"
)

// secureConfig reads the secure-mode settings (dfs.datanode.kerberos.principal,
// dfs.datanode.keytab.file): in kerberos mode the DataNode's user is its
// principal's, not HADOOP_USER_NAME, and it asks tickets for the
// NameNode's principal. Nothing is logged in here.
func secureConfig(c *conf.Configuration, cfg *Config) error {
	s, err := ipc.SecureSettingsFrom(c, security.KeyDataNodePrincipal, security.KeyDataNodeKeytab)
	if err != nil {
		return fmt.Errorf("datanode: %w", err)
	}
	cfg.Security = s
	if !s.Kerberos || s.Principal == "" {
		return nil
	}
	if cfg.User, err = s.UserOf(cfg.PrincipalHost()); err != nil {
		return fmt.Errorf("datanode: %s: %w", security.KeyDataNodePrincipal, err)
	}
	cfg.NameNodePrincipal = c.GetTrimmed(security.KeyNameNodePrincipal)
	return nil
}

// PrincipalHost is the host _HOST stands for: the reported host name,
// else the transfer address's host.
func (c Config) PrincipalHost() string {
	if c.Hostname != "" {
		return c.Hostname
	}
	return c.XferAddr
}

// secureLogin logs the DataNode in from its keytab in kerberos mode: it
// then speaks to the NameNode as that principal, which the NameNode's
// service authorization requires of DatanodeProtocol.
func (c *Config) secureLogin() error {
	if !c.Security.Kerberos || c.Login != nil {
		return nil
	}
	l, err := c.Security.Login(c.PrincipalHost())
	if err != nil {
		return fmt.Errorf("datanode: %w", err)
	}
	c.Login, c.User = l, l.User
	return nil
}
