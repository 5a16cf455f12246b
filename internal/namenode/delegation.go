package namenode

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/security"
	"github.com/stratafs/strata/internal/webhdfs"
)

// Delegation tokens (Hadoop's FSNamesystem.getDelegationToken,
// renewDelegationToken and cancelDelegationToken with its
// DelegationTokenSecretManager). The secret manager's state is part of
// the namespace (namespace.Tree.Tokens): a master key roll and every
// issue, renewal and cancellation is an edit, applied and logged by
// mutate like any namespace change, replayed at start and applied by HA
// followers, and saved in the image. So a token outlives a restart, a
// kill -9 and a failover.
//
// Tokens are issued when hadoop.security.authentication is kerberos or
// dfs.namenode.delegation.token.always-use is set; otherwise
// getDelegationToken answers without a token, as Hadoop does. With
// security on, only a caller authenticated by Kerberos (or by the web
// server's authentication) may get or renew one: a token cannot beget
// tokens. The active NameNode rolls the master key once the current one
// is older than dfs.namenode.delegation.key.update-interval (keyRollLoop),
// and before issuing a token with an outdated key (in the same mutation,
// so no token is signed with one); a roll forgets the tokens that
// expired before it and the expired keys no live token names, and
// records the replaced key's new expiry (roll time + max lifetime).

const (
	keySecurityAuthentication  = "hadoop.security.authentication"
	keyDelegationKeyUpdate     = "dfs.namenode.delegation.key.update-interval"
	keyDelegationMaxLifetime   = "dfs.namenode.delegation.token.max-lifetime"
	keyDelegationRenewInterval = "dfs.namenode.delegation.token.renew-interval"
	keyDelegationAlwaysUse     = "dfs.namenode.delegation.token.always-use"
)

// DelegationConfig is the NameNode's delegation token setup.
type DelegationConfig struct {
	// Security: hadoop.security.authentication is kerberos.
	Security bool
	// AlwaysUse issues tokens without security
	// (dfs.namenode.delegation.token.always-use).
	AlwaysUse bool
	// Timing is the key update interval, max lifetime and renew
	// interval in ms (dfs.namenode.delegation.*).
	Timing delegation.Config
	// AuthToLocal shortens renewer names (hadoop.security.auth_to_local,
	// as Hadoop's HadoopKerberosName in the token identifier): a
	// principal no rule maps is refused. Without Security (or nil):
	// delegation.ShortName.
	AuthToLocal *security.AuthToLocal
}

// renewerName is the renewer a token records for the name a client gave.
func (c DelegationConfig) renewerName(name string) (string, error) {
	if !c.Security || c.AuthToLocal == nil || !strings.ContainsAny(name, "/@") {
		return delegation.ShortName(name), nil
	}
	short, err := c.AuthToLocal.ShortName(name)
	if err != nil {
		return "", ipc.Errorf(ipc.ClassIOException, "renewer %s: %v", name, err)
	}
	return short, nil
}

// Issuing reports whether the NameNode hands out tokens (Hadoop runs its
// secret manager only then).
func (c DelegationConfig) Issuing() bool { return c.Security || c.AlwaysUse }

func delegationConfigFrom(c *conf.Configuration, r *conf.Reader, cfg *Config) error {
	cfg.Delegation = DelegationConfig{
		Security:  strings.EqualFold(strings.TrimSpace(c.Get(keySecurityAuthentication)), "kerberos"),
		AlwaysUse: r.Bool(keyDelegationAlwaysUse),
		Timing: delegation.Config{
			KeyUpdateInterval: r.Int(keyDelegationKeyUpdate),
			MaxLifetime:       r.Int(keyDelegationMaxLifetime),
			RenewInterval:     r.Int(keyDelegationRenewInterval),
		},
	}
	rules, err := security.ParseAuthToLocal(c.Get(security.KeyAuthToLocal), c.Get(security.KeyAuthToLocalMech))
	if err != nil {
		return err
	}
	cfg.Delegation.AuthToLocal = rules
	if !cfg.Delegation.Security {
		return nil
	}
	// DEFAULT's realm: krb5.conf's default_realm, else the NameNode's own.
	if kc, err := security.Krb5Config(); err == nil && kc.LibDefaults.DefaultRealm != "" {
		rules.DefaultRealm = kc.LibDefaults.DefaultRealm
	} else {
		_, _, rules.DefaultRealm = security.SplitPrincipal(c.GetTrimmed(security.KeyNameNodePrincipal))
	}
	return nil
}

// AuthMethodWeb is how a web request authenticated by the HTTP server's
// Kerberos (SPNEGO) filter is marked (Hadoop's KERBEROS_SSL); the SPNEGO
// code sets it on the WebHDFS caller.
const AuthMethodWeb ipc.AuthMethod = "KERBEROS_SSL"

// delegationOpAllowed is Hadoop's isAllowedDelegationTokenOp: with
// security off anyone may; with it on, only a caller that proved who it
// is with Kerberos, over IPC or the web. A token-authenticated caller
// may not.
func delegationOpAllowed(security bool, auth ipc.AuthMethod) bool {
	return !security || auth == ipc.AuthMethodKerberos || auth == AuthMethodWeb
}

// delegationRand is the randomness master keys are made from.
var delegationRand io.Reader = rand.Reader

func (s *Namesystem) callerAuth(ctx context.Context) ipc.AuthMethod {
	if c, ok := ipc.CallerFrom(ctx); ok {
		return c.Auth
	}
	return ipc.AuthMethodKerberos // in-process: the daemon itself
}

// tokenError converts a secret manager refusal to its RemoteException.
func tokenError(err error) error {
	var e *delegation.Error
	if errors.As(err, &e) {
		return ipc.Errorf(e.Class, "%s", e.Msg)
	}
	return err
}

// GetDelegationToken issues a token owned by the caller that renewer may
// renew; nil (and no error) when the NameNode issues no tokens. The
// token's service is empty: clients set it to the address they used.
func (s *Namesystem) GetDelegationToken(ctx context.Context, renewer string) (*delegation.Token, error) {
	dc := s.cfg.delegation
	if !dc.Issuing() {
		return nil, nil
	}
	if !delegationOpAllowed(dc.Security, s.callerAuth(ctx)) {
		return nil, ipc.Errorf(ipc.ClassIOException, "Delegation Token can be issued only with kerberos or web authentication")
	}
	renewer, err := dc.renewerName(renewer)
	if err != nil {
		return nil, err
	}
	owner, realUser := s.callerName(ctx), ""
	if c, ok := ipc.CallerFrom(ctx); ok {
		realUser = c.RealUser
	}
	var tok *delegation.Token
	err = s.mutateThen(ctx, func() ([]namespace.Edit, func(), error) {
		st, now := s.tree.Tokens(), s.nowMillis()
		var ops []namespace.Edit
		keyID := int32(0)
		if st.NeedsKey(dc.Timing, now) {
			k, err := st.NewKey(dc.Timing, now, delegationRand)
			if err != nil {
				return nil, nil, ipc.Errorf(ipc.ClassIOException, "making a delegation token master key: %v", err)
			}
			ops = append(ops, namespace.UpdateMasterKey(k, delegation.RetiredExpiry(dc.Timing, now)))
			keyID = k.ID
		}
		id, renewDate, err := st.NewIdentifier(dc.Timing, owner, renewer, realUser, now)
		if err != nil {
			return nil, nil, tokenError(err)
		}
		if keyID != 0 {
			id.MasterKeyID = keyID
			if err := id.Check(); err != nil {
				return nil, nil, tokenError(err)
			}
		}
		ops = append(ops, namespace.GetDelegationToken(id, renewDate))
		return ops, func() {
			pw, _, err := s.tree.Tokens().Retrieve(id.Bytes(), now)
			if err == nil {
				tok = &delegation.Token{Identifier: id.Bytes(), Password: pw, Kind: delegation.Kind}
			}
		}, nil
	})
	if err == nil && tok == nil {
		err = ipc.Errorf(ipc.ClassIOException, "delegation token was not recorded")
	}
	return tok, err
}

// RenewDelegationToken extends t by the renew interval (up to its max
// date) when the caller is its renewer, and returns the new expiry.
func (s *Namesystem) RenewDelegationToken(ctx context.Context, t delegation.Token) (int64, error) {
	dc := s.cfg.delegation
	if !delegationOpAllowed(dc.Security, s.callerAuth(ctx)) {
		return 0, ipc.Errorf(ipc.ClassIOException, "Delegation Token can be renewed only with kerberos or web authentication")
	}
	renewer := delegation.ShortName(s.callerName(ctx))
	var expiry int64
	err := s.mutate(ctx, func() ([]namespace.Edit, error) {
		id, exp, err := s.tree.Tokens().CheckRenew(dc.Timing, t, renewer, s.nowMillis())
		if err != nil {
			return nil, tokenError(err)
		}
		expiry = exp
		return []namespace.Edit{namespace.RenewDelegationToken(id, exp)}, nil
	})
	return expiry, err
}

// CancelDelegationToken forgets t when the caller is its owner or renewer.
func (s *Namesystem) CancelDelegationToken(ctx context.Context, t delegation.Token) error {
	canceller := s.callerName(ctx)
	return s.mutate(ctx, func() ([]namespace.Edit, error) {
		id, err := s.tree.Tokens().CheckCancel(t, canceller)
		if err != nil {
			return nil, tokenError(err)
		}
		return []namespace.Edit{namespace.CancelDelegationToken(id)}, nil
	})
}

// VerifyDelegationToken checks a presented token (its password and that
// it is live) and returns its identifier.
func (s *Namesystem) VerifyDelegationToken(t delegation.Token) (delegation.Identifier, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	id, err := s.tree.Tokens().Verify(t, s.nowMillis())
	return id, tokenError(err)
}

// RetrieveDelegationPassword is the secret manager's retrievePassword for
// a SASL DIGEST-MD5 server: the password of the live token with
// identifier, and the user it authenticates.
func (s *Namesystem) RetrieveDelegationPassword(identifier []byte) (password []byte, user string, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	pw, id, err := s.tree.Tokens().Retrieve(identifier, s.nowMillis())
	if err != nil {
		return nil, "", tokenError(err)
	}
	return pw, id.User(), nil
}

// The ClientNamenodeProtocol calls.

func tokenProto(t *delegation.Token) *hdfspb.TokenProto {
	return &hdfspb.TokenProto{Identifier: t.Identifier, Password: t.Password, Kind: proto.String(t.Kind), Service: proto.String(t.Service)}
}

func tokenFromProto(p *hdfspb.TokenProto) (delegation.Token, error) {
	if len(p.GetIdentifier()) > delegation.MaxIdentifier || len(p.GetPassword()) > delegation.MaxIdentifier {
		return delegation.Token{}, ipc.Errorf(delegation.ClassInvalidToken, "token is too long")
	}
	return delegation.Token{Identifier: p.GetIdentifier(), Password: p.GetPassword(), Kind: p.GetKind(), Service: p.GetService()}, nil
}

func (c *clientProtocol) getDelegationToken(ctx context.Context, req *hdfspb.GetDelegationTokenRequestProto) (*hdfspb.GetDelegationTokenResponseProto, error) {
	t, err := c.ns.GetDelegationToken(ctx, req.GetRenewer())
	if err != nil || t == nil {
		return &hdfspb.GetDelegationTokenResponseProto{}, err
	}
	return &hdfspb.GetDelegationTokenResponseProto{Token: tokenProto(t)}, nil
}

func (c *clientProtocol) renewDelegationToken(ctx context.Context, req *hdfspb.RenewDelegationTokenRequestProto) (*hdfspb.RenewDelegationTokenResponseProto, error) {
	t, err := tokenFromProto(req.GetToken())
	if err != nil {
		return nil, err
	}
	exp, err := c.ns.RenewDelegationToken(ctx, t)
	if err != nil {
		return nil, err
	}
	return &hdfspb.RenewDelegationTokenResponseProto{NewExpiryTime: proto.Uint64(uint64(exp))}, nil
}

func (c *clientProtocol) cancelDelegationToken(ctx context.Context, req *hdfspb.CancelDelegationTokenRequestProto) (*hdfspb.CancelDelegationTokenResponseProto, error) {
	t, err := tokenFromProto(req.GetToken())
	if err != nil {
		return nil, err
	}
	return &hdfspb.CancelDelegationTokenResponseProto{}, c.ns.CancelDelegationToken(ctx, t)
}

// WebHDFS: GETDELEGATIONTOKEN, RENEWDELEGATIONTOKEN and
// CANCELDELEGATIONTOKEN (NamenodeWebHdfsMethods), and the delegation=
// check every operation goes through (webAuthenticate).

// webAuthenticate verifies r's delegation= token, if any, and marks how
// the caller authenticated: TOKEN with a valid token (r.User is then its
// owner), SIMPLE for user.name. An invalid, cancelled or expired token is
// refused with SecretManager$InvalidToken (403).
func (n *NameNode) webAuthenticate(ctx context.Context, caller *ipc.Caller, r *webhdfs.Request) error {
	caller.Auth = ipc.AuthMethodSimple
	if id, ok := httpauth.IdentityOf(ctx); ok && id.Type == httpauth.TypeKerberos {
		// The SPNEGO filter authenticated the caller: it may get and
		// renew tokens (Hadoop's KERBEROS_SSL).
		caller.Auth = AuthMethodWeb
	}
	if r.Delegation == nil {
		if n.cfg.secure() && caller.Auth != AuthMethodWeb {
			// Only a delegation= request gets past the filter without
			// SPNEGO (httpHandler); one webhdfs found no token in is
			// refused, never served as user.name.
			return ipc.Errorf(webhdfs.ClassSecurity, "Authentication required: no Kerberos ticket or delegation token")
		}
		return nil
	}
	if _, err := n.ns.VerifyDelegationToken(*r.Delegation); err != nil {
		return err
	}
	caller.Auth = ipc.AuthMethodToken
	return nil
}

func (n *NameNode) webGetDelegationToken(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	if r.Delegation != nil {
		return ipc.Errorf(webhdfs.ClassJavaIllegalArgument, "delegation parameter is not null.")
	}
	renewer := r.String("renewer")
	if !r.Has("renewer") {
		renewer = delegation.ShortName(r.User)
	}
	t, err := n.ns.GetDelegationToken(ctx, renewer)
	if err != nil {
		return err
	}
	if t == nil {
		webhdfs.WriteJSON(w, http.StatusOK, map[string]any{"Token": nil})
		return nil
	}
	t.Kind, t.Service = delegation.WebHDFSKind, n.RPCAddr()
	if r.Has("service") {
		t.Service = r.String("service")
	}
	if r.Has("kind") {
		t.Kind = r.String("kind")
	}
	webhdfs.WriteJSON(w, http.StatusOK, map[string]map[string]string{"Token": {"urlString": t.EncodeToURLString()}})
	return nil
}

// webTokenParam decodes the token= parameter of a renewal or cancellation.
func webTokenParam(r *webhdfs.Request) (delegation.Token, error) {
	s, err := r.Required("token")
	if err != nil {
		return delegation.Token{}, err
	}
	t, err := delegation.DecodeURLString(s)
	if err != nil {
		return t, ipc.Errorf(delegation.ClassInvalidToken, "Invalid delegation token: %v", err)
	}
	return t, nil
}

func (n *NameNode) webRenewDelegationToken(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	t, err := webTokenParam(r)
	if err != nil {
		return err
	}
	exp, err := n.ns.RenewDelegationToken(ctx, t)
	if err != nil {
		return err
	}
	webhdfs.WriteJSON(w, http.StatusOK, map[string]int64{"long": exp})
	return nil
}

func (n *NameNode) webCancelDelegationToken(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	t, err := webTokenParam(r)
	if err != nil {
		return err
	}
	if err := n.ns.CancelDelegationToken(ctx, t); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	return nil
}

// RollMasterKeyIfDue makes a new master key when the current one is older
// than the key update interval (or there is none), as Hadoop's
// ExpiredTokenRemover does on its schedule; the roll also forgets expired
// keys and tokens. A no-op when the NameNode issues no tokens.
func (s *Namesystem) RollMasterKeyIfDue(ctx context.Context) error {
	dc := s.cfg.delegation
	if !dc.Issuing() {
		return nil
	}
	s.mu.RLock()
	due := !s.standby && s.tree.Tokens().NeedsKey(dc.Timing, s.nowMillis())
	s.mu.RUnlock()
	if !due {
		return nil
	}
	return s.mutate(ctx, func() ([]namespace.Edit, error) {
		st, now := s.tree.Tokens(), s.nowMillis()
		if !st.NeedsKey(dc.Timing, now) {
			return nil, nil // another call rolled it meanwhile
		}
		k, err := st.NewKey(dc.Timing, now, delegationRand)
		if err != nil {
			return nil, ipc.Errorf(ipc.ClassIOException, "making a delegation token master key: %v", err)
		}
		return []namespace.Edit{namespace.UpdateMasterKey(k, delegation.RetiredExpiry(dc.Timing, now))}, nil
	})
}

// keyRollLoop rolls the master key on schedule while this NameNode is
// active (only the active logs edits; followers apply its rolls).
func (n *NameNode) keyRollLoop() {
	if !n.cfg.Delegation.Issuing() {
		return
	}
	poll := min(time.Minute, max(time.Second, time.Duration(n.cfg.Delegation.Timing.KeyUpdateInterval)*time.Millisecond/4))
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		if n.stopped() || n.ServiceState() != HAActive || n.ns.InSafeMode() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), poll)
		if err := n.ns.RollMasterKeyIfDue(ctx); err != nil {
			n.log.Warn("namenode: delegation token master key roll failed", "err", err)
		}
		cancel()
	}
}
