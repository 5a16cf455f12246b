package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/security"
)

// daemonCommands log in from their keytabs (their ConfigFrom does); every
// other command is a client that uses the kinit credential cache.
var daemonCommands = map[string]bool{"namenode": true, "datanode": true, "jobtracker": true, "tasktracker": true, "local": true, "task": true, "experiment": true}

// clientLogin logs a client command in from the credential cache when c
// is in kerberos mode: its user is then the principal's (auth_to_local),
// never HADOOP_USER_NAME, and every IPC connection authenticates with the
// ticket. Without a ticket it warns and goes on; servers refuse it with
// Hadoop's error.
func clientLogin(cmd string, c *conf.Configuration, stderr io.Writer) error {
	if daemonCommands[cmd] {
		return nil
	}
	sc, err := security.FromConf(c)
	if err != nil {
		return err
	}
	if !sc.Kerberos {
		return nil
	}
	if keys, ok := gatewayKeytabs[cmd]; ok && c.GetTrimmed(keys[0]) != "" && c.GetTrimmed(keys[1]) != "" {
		return nil // gatewayLogin logs in from the keytab
	}
	tokUser, err := loadTokenFile(c)
	if err != nil {
		return err
	}
	l, err := security.LoginFromCCache(sc.Rules)
	if err != nil {
		if tokUser != "" {
			// Tokens only (a task, a process handed a token file):
			// the user is the one the tokens name.
			fs.SetLoginUser(tokUser)
			return nil
		}
		fmt.Fprintf(stderr, "WARN %v\n", err)
		return nil
	}
	if err := ipc.SetLogin(l, c); err != nil {
		return err
	}
	fs.SetLoginUser(l.User)
	return nil
}

// daemonLogin logs a daemon in from its keytab (settings from its
// ConfigFrom; nothing in simple mode; _HOST is host) and makes that the
// process's login, for the clients it opens itself (the file system,
// other daemons), as Hadoop's UserGroupInformation.loginUserFromKeytab.
// The login is returned for the daemon's own config, so that it does not
// log in a second time.
func daemonLogin(s security.Settings, host string, c *conf.Configuration) (*security.Login, error) {
	if !s.Kerberos {
		return nil, nil
	}
	l, err := s.Login(host)
	if err != nil {
		return nil, err
	}
	fs.SetLoginUser(l.User)
	return l, ipc.SetLogin(l, c)
}

// loadTokenFile reads the token file HADOOP_TOKEN_FILE_LOCATION names, if
// any, into the process's tokens, as Hadoop's UserGroupInformation does
// at login; it returns the user of the file's first delegation token.
func loadTokenFile(c *conf.Configuration) (string, error) {
	f := os.Getenv(delegation.TokenFileEnv)
	if f == "" {
		return "", nil
	}
	if err := ipc.LoadTokenFile(f, c); err != nil {
		return "", err
	}
	for _, t := range ipc.Tokens() {
		if t.Kind != delegation.Kind {
			continue
		}
		if id, err := delegation.DecodeIdentifier(t.Identifier); err == nil {
			return id.User(), nil
		}
	}
	return "", nil
}

// Gateway principals: the NFS gateway's are Hadoop's keys; Hadoop's
// fuse-dfs has none (it uses a ticket cache), so FUSE's are strata's.
const (
	keyNFSPrincipal  = "nfs.kerberos.principal"
	keyNFSKeytab     = "nfs.keytab.file"
	keyFUSEPrincipal = "strata.fuse.kerberos.principal"
	keyFUSEKeytab    = "strata.fuse.keytab.file"
)

// gatewayKeytabs are the gateways' principal and keytab keys by command.
var gatewayKeytabs = map[string][2]string{"nfs3": {keyNFSPrincipal, keyNFSKeytab}, "fuse": {keyFUSEPrincipal, keyFUSEKeytab}}

// gatewayLogin logs a gateway in from its own keytab in kerberos mode
// when c names both its principal and keytab (_HOST: this machine's
// name), replacing the ticket-cache login clientLogin made; otherwise
// the gateway keeps the ticket cache's login (a FUSE mount as the
// mounting user's kinit). Either way the gateway acts for the users it
// serves as a proxy user: hadoop.proxyuser.<its user>.hosts/.users/
// .groups on the NameNode decide whom it may act as.
func gatewayLogin(c *conf.Configuration, principalKey, keytabKey string) error {
	s, err := ipc.SecureSettingsFrom(c, principalKey, keytabKey)
	if err != nil || !s.Kerberos || s.Principal == "" || s.Keytab == "" {
		return err
	}
	host, err := os.Hostname()
	if err != nil {
		return err
	}
	_, err = daemonLogin(s, host, c)
	return err
}
