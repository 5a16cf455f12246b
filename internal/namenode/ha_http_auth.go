package namenode

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/stratafs/strata/internal/httpauth"
)

// NameNode-to-NameNode HTTP in secure mode. The endpoints under
// haPathPrefix (a member's HA stats, the namespace digest, which hashes
// the image under the namespace read lock, and the storage identity
// -bootstrapStandby copies) are for NameNodes only: as Hadoop's
// ImageServlet.isValidRequestor, a request must authenticate by SPNEGO as
// dfs.namenode.kerberos.principal with _HOST replaced by the host of a
// member (this one included); anyone else is refused. Peers authenticate
// with httpauth.NewKeytabClient from dfs.namenode.keytab.file.

// secure reports hadoop.security.authentication=kerberos (config.go sets
// WebHDFSAuth's Type to kerberos exactly then).
func (c *Config) secure() bool { return c.WebHDFSAuth.Type == httpauth.TypeKerberos }

// nnPrincipals are the principals a NameNode of this nameservice has.
func (c *Config) nnPrincipals() map[string]bool {
	out := map[string]bool{}
	if c.NNPrincipal == "" {
		return out
	}
	addrs := []string{c.RPCAddr, c.HTTPAddr}
	if c.HA != nil {
		for _, m := range c.HA.Members {
			addrs = append(addrs, m.RPCAddr, m.HTTPAddr)
		}
	}
	for _, a := range addrs {
		if a != "" {
			out[strings.ReplaceAll(c.NNPrincipal, "_HOST", httpauth.ServerHost(a))] = true
		}
	}
	return out
}

// haGuard is kerb (the port's Kerberos filter) in front of next, then the
// check that the caller is a NameNode. kerb nil or noWebHDFSKeytab: no
// SPNEGO is possible and every request is refused.
func (n *NameNode) haGuard(kerb *httpauth.Filter, next http.Handler) http.Handler {
	valid := n.cfg.nnPrincipals()
	check := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := httpauth.IdentityOf(r.Context())
		if !ok || id.Type != httpauth.TypeKerberos || !nnPrincipalMatch(valid, id.Principal) {
			http.Error(w, fmt.Sprintf("Only NameNodes may request %s (%s)", r.URL.Path, keyNNPrincipal), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
	if !kerb.Kerberos() || kerb == noWebHDFSKeytab {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, fmt.Sprintf("%s needs SPNEGO when %s is kerberos: set %s (or %s)",
				r.URL.Path, httpauth.KeySecurityAuthentication, httpauth.KeyWebHDFSKeytab, httpauth.KeyKeytab), http.StatusForbidden)
		})
	}
	return kerb.Wrap(check)
}

// nnPrincipalMatch: a configured principal without a realm matches any
// realm the filter accepted (its own, since auth_to_local maps no other).
func nnPrincipalMatch(valid map[string]bool, principal string) bool {
	if valid[principal] {
		return true
	}
	name, _, _ := strings.Cut(principal, "@")
	return valid[name]
}

// httpDoer is http.Client or httpauth.Client.
type httpDoer interface {
	Do(*http.Request) (*http.Response, error)
}

// peerHTTP is how this NameNode calls its peers' haPathPrefix endpoints:
// plain HTTP, or in secure mode SPNEGO as the NameNode's principal (its
// login made once and kept; gokrb5 renews it from the keytab).
type peerHTTP struct {
	mu  sync.Mutex
	krb *httpauth.Client
}

func (p *peerHTTP) client(cfg *Config, hc *http.Client) (httpDoer, error) {
	if !cfg.secure() {
		return hc, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.krb == nil {
		c, err := newPeerClient(cfg, &http.Client{})
		if err != nil {
			return nil, err
		}
		p.krb = c
	}
	// The login is shared; each call brings its own timeout.
	return p.krb.WithHTTP(hc), nil
}

func (p *peerHTTP) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.krb != nil {
		p.krb.Close()
		p.krb = nil
	}
}

// newPeerClient logs in as the NameNode's principal (_HOST: the host of
// its RPC address) from its keytab.
func newPeerClient(cfg *Config, hc *http.Client) (*httpauth.Client, error) {
	if cfg.NNPrincipal == "" || cfg.NNKeytab == "" {
		return nil, fmt.Errorf("namenode: secure mode needs %s and %s to call other NameNodes", keyNNPrincipal, keyNNKeytab)
	}
	p := strings.ReplaceAll(cfg.NNPrincipal, "_HOST", httpauth.ServerHost(cfg.RPCAddr))
	return httpauth.NewKeytabClient(hc, p, cfg.NNKeytab)
}

const (
	keyNNPrincipal = "dfs.namenode.kerberos.principal"
	keyNNKeytab    = "dfs.namenode.keytab.file"
)

func get(cl httpDoer, url string) (*http.Response, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return nil, err
	}
	return cl.Do(req)
}
