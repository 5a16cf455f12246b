package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/security"
)

// KeyJobHDFSServers lists further file systems (URIs, comma-separated)
// a job's tasks reach, whose delegation tokens the client obtains too
// (Hadoop's mapreduce.job.hdfs-servers).
const KeyJobHDFSServers = "mapreduce.job.hdfs-servers"

// tokenGetter is a file system that issues delegation tokens (HDFS).
type tokenGetter interface {
	GetDelegationToken(ctx context.Context, renewer string) (*delegation.Token, error)
}

// obtainTokens is Hadoop's TokenCache.obtainTokensForNamenodes: in
// kerberos mode, a delegation token of every file system the job uses —
// fs.defaultFS and mapreduce.job.hdfs-servers — that the JobTracker may
// renew (renewer: mapreduce.jobtracker.kerberos.principal, _HOST its host,
// mapped to a user by hadoop.security.auth_to_local, the user the
// JobTracker's login is), as a token storage file (nil in simple mode).
func obtainTokens(ctx context.Context, env fs.Env, c *conf.Configuration, jtAddr string) ([]byte, error) {
	if !strings.EqualFold(strings.TrimSpace(c.Get(security.KeyAuthentication)), "kerberos") {
		return nil, nil
	}
	p := c.GetTrimmed(security.KeyJobTrackerPrincipal)
	if p == "" {
		return nil, errors.New("mapreduce: Can't get Master Kerberos principal for use as renewer")
	}
	renewer, err := jobTrackerUser(c, p, jtAddr)
	if err != nil {
		return nil, err
	}
	def, err := fs.DefaultURI(c)
	if err != nil {
		return nil, err
	}
	uris := []string{def.String()}
	for _, u := range strings.Split(c.Get(KeyJobHDFSServers), ",") {
		if u = strings.TrimSpace(u); u != "" {
			uris = append(uris, u)
		}
	}
	var toks []delegation.AliasToken
	seen := map[string]bool{}
	for _, u := range uris {
		if t := heldToken(c, u); t != nil {
			// Hadoop's TokenCache: a token the process already holds
			// (a job submitted from a task) is shipped again.
			if !seen[t.Service] {
				seen[t.Service] = true
				toks = append(toks, delegation.AliasToken{Alias: t.Service, Token: *t})
			}
			continue
		}
		fsys, err := fs.Get(ctx, u, env)
		if err != nil {
			return nil, fmt.Errorf("mapreduce: delegation token for %s: %w", u, err)
		}
		g, ok := fsys.(tokenGetter)
		if !ok {
			fsys.Close()
			continue // a file system without tokens (file:)
		}
		t, err := g.GetDelegationToken(ctx, renewer)
		fsys.Close()
		if err != nil {
			return nil, fmt.Errorf("mapreduce: delegation token for %s: %w", u, err)
		}
		if t == nil || seen[t.Service] {
			continue
		}
		seen[t.Service] = true
		toks = append(toks, delegation.AliasToken{Alias: t.Service, Token: *t})
	}
	if len(toks) == 0 {
		return nil, nil
	}
	return delegation.WriteCredentials(toks), nil
}

// jobTrackerUser is the user the JobTracker with principal p (maybe with
// _HOST) at jtAddr logs in as: p mapped by the auth_to_local rules, as
// Hadoop's renewer is (Master.getMasterUserName's KerberosName).
func jobTrackerUser(c *conf.Configuration, p, jtAddr string) (string, error) {
	s := security.Settings{Principal: p, AuthToLocal: c.Get(security.KeyAuthToLocal), AuthToLocalMechanism: c.Get(security.KeyAuthToLocalMech)}
	u, err := s.UserOf(jtAddr)
	if err != nil {
		return "", fmt.Errorf("mapreduce: the JobTracker's user (renewer): %w", err)
	}
	return u, nil
}

// heldToken is the process's delegation token (ipc.Tokens: a token
// file's) for the HDFS file system at uri, if it holds one.
func heldToken(c *conf.Configuration, uri string) *delegation.Token {
	held := ipc.Tokens()
	if len(held) == 0 {
		return nil
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "hdfs" || u.Host == "" {
		return nil
	}
	svc, err := hdfs.TokenService(c, u.Host)
	if err != nil {
		return nil
	}
	for i := range held {
		if held[i].Kind == delegation.Kind && held[i].Service == svc {
			return &held[i]
		}
	}
	return nil
}
