package jobtracker

import (
	"context"
	"fmt"
	"net"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/jobtoken"
	"github.com/stratafs/strata/internal/security"
	"github.com/stratafs/strata/internal/taskrun"
)

// The JobTracker's protocols' principals (Hadoop's @KerberosInfo): job
// clients ask tickets for the JobTracker's principal; only TaskTrackers
// may speak InterTrackerProtocol; task children present their job's token
// on the umbilical protocol (and the JobTracker takes it for nothing else:
// tokenMethods).
func init() {
	jt := security.KeyJobTrackerPrincipal
	ipc.RegisterKerberosInfo(SubmissionProtocol, ipc.KerberosInfo{ServerPrincipalKey: jt})
	ipc.RegisterKerberosInfo(taskrun.UmbilicalProtocol, ipc.KerberosInfo{ServerPrincipalKey: jt, TokenKind: jobtoken.Kind})
	ipc.RegisterKerberosInfo(InterTrackerProtocol, ipc.KerberosInfo{ServerPrincipalKey: jt, ClientPrincipalKey: security.KeyTaskTrackerPrincipal})
}

// tokenMethods are the calls a job token authenticates: a task child's.
// A job token is no user identity — its "user" is the job id — so a TOKEN
// caller of any other method is refused, whatever protocol the call names.
var tokenMethods = map[string]bool{"getMapCompletionEvents": true}

// register registers protocol's methods, those outside tokenMethods
// guarded against TOKEN callers.
func (jt *JobTracker) register(protocol string, methods map[string]ipc.Method) {
	for name, m := range methods {
		if !tokenMethods[name] {
			methods[name] = m.Guard(func(ctx context.Context) error { return refuseToken(ctx, protocol) })
		}
	}
	jt.srv.Register(protocol, methods)
}

// refuseToken refuses a TOKEN caller with Hadoop's service authorization
// message.
func refuseToken(ctx context.Context, protocol string) error {
	if c, ok := ipc.CallerFrom(ctx); ok && c.Auth == ipc.AuthMethodToken {
		return ipc.Errorf(security.ClassAuthorization, "User %s (auth:TOKEN) is not authorized for protocol %s", c.User, protocol)
	}
	return nil
}

// secureConfig reads the secure-mode settings
// (mapreduce.jobtracker.kerberos.principal, mapreduce.jobtracker.keytab.file).
// Nothing is logged in here.
func secureConfig(c *conf.Configuration, cfg *Config) error {
	s, err := ipc.SecureSettingsFrom(c, security.KeyJobTrackerPrincipal, security.KeyJobTrackerKeytab)
	if err != nil {
		return fmt.Errorf("jobtracker: %w", err)
	}
	cfg.Security = s
	return nil
}

// secureRPC logs the JobTracker in from its keytab in kerberos mode and
// makes its RPC server require Kerberos.
func (jt *JobTracker) secureRPC() error {
	sec, err := ipc.KerberosServer(jt.cfg.Security, nil, jt.cfg.Addr, nil)
	if err != nil {
		return fmt.Errorf("jobtracker: %w", err)
	}
	if sec != nil {
		// The JobTracker renews and cancels jobs' tokens as its own
		// principal (their renewer), whatever login the process has: in
		// strata local it shares a process with the NameNode.
		if ops, ok := jt.tokenOps.(hdfsTokenOps); ok && jt.cfg.Security.Keytab != "" {
			host, _, _ := net.SplitHostPort(jt.cfg.Addr)
			login, err := jt.cfg.Security.Login(host)
			if err != nil {
				return fmt.Errorf("jobtracker: %w", err)
			}
			ops.login = login
			jt.tokenOps = ops
		}
		// Tasks authenticate with their job's token (TOKEN first, as
		// Hadoop's servers list it).
		tm := &ipc.TokenMechanism{QOPs: jt.cfg.Security.QOPs, Retrieve: jt.retrieveJobToken}
		sec.SASL.Mechanisms = append([]ipc.SASLMechanism{tm}, sec.SASL.Mechanisms...)
		jt.srv.SetSASL(sec.SASL)
	}
	return nil
}
