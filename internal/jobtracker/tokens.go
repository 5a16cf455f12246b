package jobtracker

import (
	"context"
	"strings"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/jobtoken"
	"github.com/stratafs/strata/internal/proto/mrpb"
)

// A job's credentials (JobSpec.credentials) are the delegation tokens its
// client obtained. The JobTracker renews them while the job runs (Hadoop
// 1's DelegationTokenRenewal: at once, then each time 90% of the way to
// the expiry the last renewal gave) and cancels them once the job and its
// cleanup have ended, unless the job sets
// mapreduce.job.complete.cancel.delegation.tokens=false. It talks to the
// NameNodes as itself (its keytab login), the tokens' renewer.

const keyCancelTokens = "mapreduce.job.complete.cancel.delegation.tokens"

// renewalDelay is how long after now to renew a token that expires at
// expiry (ms since the epoch): 90% of the time left, at least a second.
func renewalDelay(expiry int64, now time.Time) time.Duration {
	left := time.Duration(expiry-now.UnixMilli()) * time.Millisecond
	return max(left*9/10, time.Second)
}

// tokenOps renews and cancels tokens at the NameNodes they name; a
// variable so that tests can watch it without a NameNode.
type tokenOps interface {
	renew(ctx context.Context, t *delegation.Token) (int64, error)
	cancel(ctx context.Context, t *delegation.Token) error
}

// hdfsTokenOps reaches the NameNode of a token's service with the
// JobTracker's configuration and login.
type hdfsTokenOps struct{ c *conf.Configuration }

func (o hdfsTokenOps) client(t *delegation.Token) (*hdfs.Client, error) {
	c := o.c
	if c == nil {
		c = conf.New()
	}
	opts, err := hdfs.OptionsFrom(c, strings.TrimPrefix(t.Service, "ha-hdfs:"))
	if err != nil {
		return nil, err
	}
	return hdfs.New(opts)
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

// manageTokens renews j's delegation tokens until j and its cleanup have
// ended (or the JobTracker stops), then cancels them if the job asks.
func (jt *JobTracker) manageTokens(j *job, toks []delegation.Token, cancelAtEnd bool) {
	next := make([]time.Time, len(toks)) // zero: renew now
	live := make([]bool, len(toks))
	for i := range live {
		live[i] = true
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
			if !live[i] || now.Before(next[i]) {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			exp, err := jt.tokenOps.renew(ctx, &toks[i])
			cancel()
			if err != nil {
				// Hadoop stops renewing a token it cannot renew; the
				// tasks' next use of it says why.
				jt.log.Warn("jobtracker: renewing a delegation token failed", "job", j.id, "token", tokenString(toks[i]), "err", err)
				live[i] = false
				continue
			}
			next[i] = now.Add(renewalDelay(exp, now))
			jt.log.Info("jobtracker: renewed a delegation token", "job", j.id, "token", tokenString(toks[i]), "expires", time.UnixMilli(exp).UTC().Format(time.RFC3339))
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
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := jt.tokenOps.cancel(ctx, &toks[i])
		cancel()
		if err != nil {
			jt.log.Warn("jobtracker: cancelling a delegation token failed", "job", j.id, "token", tokenString(toks[i]), "err", err)
			continue
		}
		jt.log.Info("jobtracker: cancelled a delegation token", "job", j.id, "token", tokenString(toks[i]))
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
	ats, err := delegation.ReadCredentials(spec.GetCredentials())
	if err != nil {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "job %q: credentials: %v", spec.GetJob(), err)
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
