package tasktracker

import (
	"fmt"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/security"
)

// secureConfig logs the TaskTracker in from its keytab in kerberos mode
// (mapreduce.tasktracker.kerberos.principal, _HOST this host;
// mapreduce.tasktracker.keytab.file): the JobTracker accepts
// InterTrackerProtocol from that principal only.
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
	p, err := security.ServerPrincipal(c.Get(security.KeyTaskTrackerPrincipal), cfg.HTTPAddr)
	if err != nil {
		return err
	}
	l, err := security.LoginFromKeytabFile(kc, p, c.Get(security.KeyTaskTrackerKeytab), sc.Rules)
	if err != nil {
		return fmt.Errorf("tasktracker: %w", err)
	}
	cfg.Login, cfg.User = l, l.User
	return nil
}
