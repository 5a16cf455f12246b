package tasktracker

import (
	"fmt"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/security"
)

// secureConfig reads the secure-mode settings
// (mapreduce.tasktracker.kerberos.principal, _HOST this tracker's host;
// mapreduce.tasktracker.keytab.file). Nothing is logged in here.
func secureConfig(c *conf.Configuration, cfg *Config) error {
	s, err := ipc.SecureSettingsFrom(c, security.KeyTaskTrackerPrincipal, security.KeyTaskTrackerKeytab)
	if err != nil {
		return fmt.Errorf("tasktracker: %w", err)
	}
	cfg.Security = s
	if s.Kerberos && s.Principal != "" {
		if cfg.User, err = s.UserOf(cfg.HTTPAddr); err != nil {
			return fmt.Errorf("tasktracker: %s: %w", security.KeyTaskTrackerPrincipal, err)
		}
	}
	return nil
}

// secureLogin logs the TaskTracker in from its keytab in kerberos mode:
// the JobTracker accepts InterTrackerProtocol from that principal only.
func (c *Config) secureLogin() error {
	if !c.Security.Kerberos || c.Login != nil {
		return nil
	}
	l, err := c.Security.Login(c.HTTPAddr)
	if err != nil {
		return fmt.Errorf("tasktracker: %w", err)
	}
	c.Login, c.User = l, l.User
	return nil
}
