package jobtracker

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/jobtoken"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/security"
	"github.com/stratafs/strata/mapreduce"
)

// A job's credentials (JobSpec.credentials) are the delegation tokens its
// client obtained. The JobTracker renews those of the job's file systems
// (fs.defaultFS and mapreduce.job.hdfs-servers, as it resolves them)
// once at submission — the renewal proves the token's password, and a
// job whose first renewal fails is refused — then while the job runs
// (Hadoop's DelegationTokenRenewal: each time 90% of the way to the
// expiry the last renewal gave, a failed renewal retried with backoff
// until the token expires), and cancels them once the job and its cleanup
// have ended, unless the job sets
// mapreduce.job.complete.cancel.delegation.tokens=false. It talks to the
// NameNodes as itself (its keytab login), the tokens' renewer. Only tokens
// it renewed are cancelled: a NameNode's cancel checks only the
// identifier, and the JobTracker must not cancel a token its submitter
// merely named. Every token must be the submitter's (or a user's the
// submitter may impersonate); the credentials are bounded in count and
// bytes, as they are copied into every task's spec.

const (
	keyCancelTokens = "mapreduce.job.complete.cancel.delegation.tokens"

	maxJobTokens          = 64
	maxJobCredentialBytes = 256 << 10
	// renewTimeout bounds one renewal or cancellation, and all of a
	// submission's renewals.
	renewTimeout = 30 * time.Second
	// maxRenewBackoff bounds the wait between retries of a failed renewal.
	maxRenewBackoff = time.Minute
)

// renewalDelay is how long after now to renew a token that expires at
// expiry (ms since the epoch): 90% of the time left, at least a second.
func renewalDelay(expiry int64, now time.Time) time.Duration {
	left := time.Duration(expiry-now.UnixMilli()) * time.Millisecond
	return max(left*9/10, time.Second)
}

// retryDelay is the wait before the n-th retry (n ≥ 1) of a failed
// renewal: 1 s doubling, at most maxRenewBackoff.
func retryDelay(n int) time.Duration {
	if n > 6 {
		return maxRenewBackoff
	}
	return min(time.Second<<(n-1), maxRenewBackoff)
}

// tokenOps renews and cancels tokens at the NameNodes they name; a
// variable so that tests can watch it without a NameNode.
type tokenOps interface {
	renew(ctx context.Context, t *delegation.Token) (int64, error)
	cancel(ctx context.Context, t *delegation.Token) error
}

// hdfsTokenOps reaches the NameNode of a token's service with the
// JobTracker's configuration and login (nil: the process's).
type hdfsTokenOps struct {
	c     *conf.Configuration
	login *security.Login
}

func (o hdfsTokenOps) client(t *delegation.Token) (*hdfs.Client, error) {
	opts, err := hdfs.OptionsFrom(o.conf(), strings.TrimPrefix(t.Service, "ha-hdfs:"))
	if err != nil {
		return nil, err
	}
	if o.login != nil {
		opts.Login, opts.User = o.login, o.login.User
	}
	return hdfs.New(opts)
}

func (o hdfsTokenOps) conf() *conf.Configuration {
	if o.c == nil {
		return conf.New()
	}
	return o.c
}

func (o hdfsTokenOps) renew(ctx context.Context, t *delegation.Token) (int64, error) {
	cl, err := o.client(t)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	return cl.RenewDelegationToken(ctx, t)
}

func (o hdfsTokenOps) cancel(ctx context.Context, t *delegation.Token) error {
	cl, err := o.client(t)
	if err != nil {
		return err
	}
	defer cl.Close()
	return cl.CancelDelegationToken(ctx, t)
}

// renewedToken is a token whose renewal at submission succeeded.
type renewedToken struct {
	tok    delegation.Token
	at     time.Time // of the renewal
	expiry int64     // ms since the epoch
}

// opContext bounds a renewal or cancellation by renewTimeout, parent and
// the JobTracker's stop.
func (jt *JobTracker) opContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(parent, renewTimeout)
	stop := context.AfterFunc(jt.stopCtx, cancel)
	return ctx, func() { stop(); cancel() }
}

// jobServices are the token services of the job's file systems
// (fs.defaultFS and mapreduce.job.hdfs-servers in c, the job's
// configuration), resolved by the JobTracker's configuration.
func (jt *JobTracker) jobServices(c *conf.Configuration) map[string]bool {
	uris := []string{c.Get("fs.defaultFS")}
	uris = append(uris, strings.Split(c.Get(mapreduce.KeyJobHDFSServers), ",")...)
	svcs := map[string]bool{}
	for _, s := range uris {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || u.Scheme != "hdfs" || u.Host == "" {
			continue
		}
		if svc, err := hdfs.TokenService(jt.tokenConf(), u.Host); err == nil {
			svcs[svc] = true
		}
	}
	return svcs
}

// tokenConf is the configuration the JobTracker reaches NameNodes with.
func (jt *JobTracker) tokenConf() *conf.Configuration {
	if jt.cfg.HistoryConf != nil {
		return jt.cfg.HistoryConf
	}
	return conf.New()
}

// verifyTokens checks that every delegation token of toks is user's (or
// a user's user may impersonate from remoteIP), then renews those of the
// job's file systems (svcs), all within renewTimeout of ctx. It returns
// the renewed tokens, the ones the JobTracker manages.
func (jt *JobTracker) verifyTokens(ctx context.Context, job, user, remoteIP string, svcs map[string]bool, toks []delegation.Token) ([]renewedToken, error) {
	for _, t := range toks {
		id, err := delegation.DecodeIdentifier(t.Identifier)
		if err != nil {
			return nil, ipc.Errorf(ipc.ClassIllegalArgument, "job %q: credentials: %v", job, err)
		}
		owner := jt.ownerUser(id)
		if id.Owner == user || owner == user {
			continue
		}
		if p := jt.cfg.Security.ProxyUsers; p != nil && p.Authorize(user, owner, remoteIP) == nil {
			continue
		}
		return nil, ipc.Errorf(ipc.ClassAccessControl, "job %q: %v is not %s's", job, id, user)
	}
	ctx, cancel := jt.opContext(ctx)
	defer cancel()
	var out []renewedToken
	seen := map[string]bool{}
	for _, t := range toks {
		if !svcs[t.Service] || seen[string(t.Identifier)] {
			continue
		}
		seen[string(t.Identifier)] = true
		exp, err := jt.tokenOps.renew(ctx, &t)
		if err != nil {
			class := ipc.ClassOf(err)
			if jt.stopCtx.Err() != nil {
				class = ipc.ClassIOException
			}
			return nil, ipc.Errorf(class, "job %q: renewing %s: %v", job, tokenString(t), err)
		}
		jt.mu.Lock()
		now := jt.now()
		jt.mu.Unlock()
		out = append(out, renewedToken{tok: t, at: now, expiry: exp})
		jt.log.Info("jobtracker: renewed a delegation token", "submitter", user, "token", tokenString(t), "expires", time.UnixMilli(exp).UTC().Format(time.RFC3339))
	}
	return out, nil
}

// ownerUser is the user of a token's owner by the JobTracker's
// auth_to_local rules, as its callers' principals are mapped.
func (jt *JobTracker) ownerUser(id delegation.Identifier) string {
	if rules, err := jt.cfg.Security.Rules(); err == nil && strings.ContainsAny(id.Owner, "/@") {
		if u, err := rules.ShortName(id.Owner); err == nil {
			return u
		}
	}
	return id.User()
}

// manageTokens renews j's renewed tokens until j and its cleanup have
// ended (or the JobTracker stops), then cancels them if the job asks.
func (jt *JobTracker) manageTokens(j *job, toks []renewedToken, cancelAtEnd bool) {
	next := make([]time.Time, len(toks))
	fails := make([]int, len(toks))
	for i, t := range toks {
		next[i] = t.at.Add(renewalDelay(t.expiry, t.at))
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		jt.mu.Lock()
		ended := j.state != mrpb.JobState_RUNNING && cleanupDone(j)
		now := jt.now()
		jt.mu.Unlock()
		if ended {
			break
		}
		for i := range toks {
			t := &toks[i]
			if next[i].IsZero() || now.Before(next[i]) {
				continue
			}
			ctx, cancel := jt.opContext(context.Background())
			exp, err := jt.tokenOps.renew(ctx, &t.tok)
			cancel()
			if jt.stopCtx.Err() != nil {
				return
			}
			if err != nil {
				fails[i]++
				if retry := now.Add(retryDelay(fails[i])); retry.UnixMilli() < t.expiry {
					next[i] = retry
					jt.log.Warn("jobtracker: renewing a delegation token failed; will retry", "job", j.id, "token", tokenString(t.tok), "retry", retry.UTC().Format(time.RFC3339), "err", err)
				} else {
					next[i] = time.Time{} // expires before another try
					jt.log.Warn("jobtracker: renewing a delegation token failed; it expires", "job", j.id, "token", tokenString(t.tok), "err", err)
				}
				continue
			}
			fails[i], t.expiry = 0, exp
			next[i] = now.Add(renewalDelay(exp, now))
			jt.log.Info("jobtracker: renewed a delegation token", "job", j.id, "token", tokenString(t.tok), "expires", time.UnixMilli(exp).UTC().Format(time.RFC3339))
		}
		select {
		case <-jt.stop:
			return
		case <-tick.C:
		}
	}
	if !cancelAtEnd {
		return
	}
	for i := range toks {
		ctx, cancel := jt.opContext(context.Background())
		err := jt.tokenOps.cancel(ctx, &toks[i].tok)
		cancel()
		if err != nil {
			jt.log.Warn("jobtracker: cancelling a delegation token failed", "job", j.id, "token", tokenString(toks[i].tok), "err", err)
			continue
		}
		jt.log.Info("jobtracker: cancelled a delegation token", "job", j.id, "token", tokenString(toks[i].tok))
	}
}

func tokenString(t delegation.Token) string {
	if id, err := delegation.DecodeIdentifier(t.Identifier); err == nil {
		return id.String()
	}
	return t.Kind
}

// jobCredentials checks a submitted job's credentials and returns their
// delegation tokens.
func jobCredentials(spec *mrpb.JobSpec) ([]delegation.Token, error) {
	if len(spec.GetCredentials()) == 0 {
		return nil, nil
	}
	if n := len(spec.GetCredentials()); n > maxJobCredentialBytes {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "job %q: credentials of %d bytes, more than %d", spec.GetJob(), n, maxJobCredentialBytes)
	}
	ats, err := delegation.ReadCredentials(spec.GetCredentials())
	if err != nil {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "job %q: credentials: %v", spec.GetJob(), err)
	}
	if len(ats) > maxJobTokens {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "job %q: %d tokens in its credentials, more than %d", spec.GetJob(), len(ats), maxJobTokens)
	}
	var toks []delegation.Token
	for _, at := range ats {
		if at.Token.Kind == delegation.Kind {
			toks = append(toks, at.Token)
		}
	}
	return toks, nil
}

// retrieveJobToken is the job token secret manager's retrievePassword:
// the secret of a running job, authenticating the job id as the user
// (Hadoop's JobTokenIdentifier.getUser).
func (jt *JobTracker) retrieveJobToken(identifier []byte) ([]byte, string, string, error) {
	id, err := jobtoken.ParseIdentifier(identifier)
	if err != nil {
		return nil, "", "", ipc.Errorf(delegation.ClassInvalidToken, "%v", err)
	}
	jt.mu.Lock()
	defer jt.mu.Unlock()
	j := jt.jobs[id]
	if j == nil || j.secret == nil {
		return nil, "", "", ipc.Errorf(delegation.ClassInvalidToken, "can't find job token for job %s !!", id)
	}
	return append([]byte(nil), j.secret...), id, "", nil
}
