package httpauth

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/spnego"
)

// Client sends requests to a SPNEGO-protected server as curl --negotiate
// does: a request answered 401 with "WWW-Authenticate: Negotiate" is sent
// once more with a Kerberos service ticket for the server's HTTP
// principal, got with the user's ticket-granting ticket.
type Client struct {
	HTTP *http.Client
	krb  *client.Client
	spn  string
}

// NewClient is a Client for the server at addr (host:port), whose
// principal is HTTP/<ServerHost(addr)>, with the user's Kerberos login:
// the credential cache $KRB5CCNAME (FILE:path or a path; default
// /tmp/krb5cc_<uid>) and krb5.conf ($KRB5_CONFIG, default /etc/krb5.conf).
func NewClient(hc *http.Client, addr string) (*Client, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	path := os.Getenv("KRB5_CONFIG")
	if path == "" {
		path = "/etc/krb5.conf"
	}
	cfg, err := config.Load(path)
	if err != nil {
		return nil, fmt.Errorf("httpauth: krb5.conf %s: %w", path, err)
	}
	cc := strings.TrimPrefix(os.Getenv("KRB5CCNAME"), "FILE:")
	if cc == "" {
		cc = fmt.Sprintf("/tmp/krb5cc_%d", os.Getuid())
	}
	cache, err := credentials.LoadCCache(cc)
	if err != nil {
		return nil, fmt.Errorf("httpauth: no Kerberos ticket (kinit first): credential cache %s: %w", cc, err)
	}
	kc, err := client.NewFromCCache(cache, cfg, client.DisablePAFXFAST(true))
	if err != nil {
		return nil, fmt.Errorf("httpauth: Kerberos login from %s: %w", cc, err)
	}
	return &Client{HTTP: hc, krb: kc, spn: "HTTP/" + ServerHost(addr)}, nil
}

// NewKeytabClient is a Client for any server (its principal is
// HTTP/<ServerHost of the request's host>) that logs in as
// principal ("name/host@REALM"; no realm: krb5.conf's default) with the
// keys in keytab, as a daemon authenticates to another daemon's web
// server (Hadoop's KerberosAuthenticator under the daemon's login).
func NewKeytabClient(hc *http.Client, principal, keytabPath string) (*Client, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	path := os.Getenv("KRB5_CONFIG")
	if path == "" {
		path = "/etc/krb5.conf"
	}
	cfg, err := config.Load(path)
	if err != nil {
		return nil, fmt.Errorf("httpauth: krb5.conf %s: %w", path, err)
	}
	kt, err := keytab.Load(keytabPath)
	if err != nil {
		return nil, fmt.Errorf("httpauth: keytab %s: %w", keytabPath, err)
	}
	name, realm, _ := strings.Cut(principal, "@")
	if realm == "" {
		realm = cfg.LibDefaults.DefaultRealm
	}
	kc := client.NewWithKeytab(name, realm, kt, cfg, client.DisablePAFXFAST(true))
	if err := kc.Login(); err != nil {
		return nil, fmt.Errorf("httpauth: Kerberos login as %s@%s from %s: %w", name, realm, keytabPath, err)
	}
	return &Client{HTTP: hc, krb: kc}, nil
}

// Do sends req (which must have no body), answering one Negotiate
// challenge.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.HTTP.Do(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || !negotiate(resp) {
		return resp, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	req = req.Clone(req.Context())
	spn := c.spn
	if spn == "" {
		spn = "HTTP/" + ServerHost(req.URL.Host)
	}
	if err := spnego.SetSPNEGOHeader(c.krb, req, spn); err != nil {
		return nil, fmt.Errorf("httpauth: SPNEGO for %s: %w", spn, err)
	}
	return c.HTTP.Do(req)
}

func negotiate(resp *http.Response) bool {
	for _, v := range resp.Header.Values("WWW-Authenticate") {
		if strings.HasPrefix(v, "Negotiate") {
			return true
		}
	}
	return false
}

// WithHTTP is c sending with hc: the same login, another transport or
// timeout.
func (c *Client) WithHTTP(hc *http.Client) *Client {
	d := *c
	d.HTTP = hc
	return &d
}

// Close forgets the Kerberos login.
func (c *Client) Close() { c.krb.Destroy() }
