package security

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/keytab"
)

// Login is a logged-in Kerberos identity: a daemon's from its keytab, or
// a user's from the kinit credential cache.
type Login struct {
	// Client gets service tickets; it is safe for concurrent use.
	Client *client.Client
	// Principal is the full name, primary/instance@REALM.
	Principal string
	// User is Principal mapped by auth_to_local.
	User string
	// Keytab is the daemon's keytab (nil for a ticket-cache login); a
	// server verifies its clients' tickets with it.
	Keytab *keytab.Keytab
	// Krb5 is the krb5.conf in use.
	Krb5 *config.Config
}

// Krb5Config loads krb5.conf from $KRB5_CONFIG, else /etc/krb5.conf.
func Krb5Config() (*config.Config, error) {
	path := os.Getenv("KRB5_CONFIG")
	if path == "" {
		path = "/etc/krb5.conf"
	}
	// KRB5_CONFIG may list several files; the first is used.
	path, _, _ = strings.Cut(path, ":")
	c, err := config.Load(path)
	if err != nil {
		return nil, fmt.Errorf("security: loading krb5.conf %s: %w", path, err)
	}
	return c, nil
}

// ClockSkew is krb5.conf's libdefaults clockskew (gokrb5's default 5 min).
func ClockSkew(c *config.Config) time.Duration {
	if c == nil || c.LibDefaults.Clockskew <= 0 {
		return 5 * time.Minute
	}
	return c.LibDefaults.Clockskew
}

// CCachePath is the credential cache a client uses: $KRB5CCNAME (FILE:
// caches only), else /tmp/krb5cc_<uid>, as MIT's kinit.
func CCachePath() (string, error) {
	v := os.Getenv("KRB5CCNAME")
	if v == "" {
		return fmt.Sprintf("/tmp/krb5cc_%d", os.Getuid()), nil
	}
	if rest, ok := strings.CutPrefix(v, "FILE:"); ok {
		return rest, nil
	}
	if strings.Contains(v, ":") && !strings.HasPrefix(v, "/") {
		return "", fmt.Errorf("security: KRB5CCNAME=%s: only FILE: credential caches are supported", v)
	}
	return v, nil
}

// LoginFromCCache logs the user in from the kinit credential cache and
// maps the principal with rules (nil: DEFAULT).
func LoginFromCCache(rules *AuthToLocal) (*Login, error) {
	kc, err := Krb5Config()
	if err != nil {
		return nil, err
	}
	path, err := CCachePath()
	if err != nil {
		return nil, err
	}
	return LoginFromCCacheFile(kc, path, rules)
}

// LoginFromCCacheFile is LoginFromCCache with krb5.conf and the cache
// given.
func LoginFromCCacheFile(kc *config.Config, path string, rules *AuthToLocal) (*Login, error) {
	cc, err := loadCCache(path)
	if errors.Is(err, errEmptyCCache) {
		return nil, fmt.Errorf("security: no Kerberos credentials: run kinit (credential cache %s is empty)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("security: no Kerberos credentials (kinit first): reading credential cache %s: %w", path, err)
	}
	cl, err := client.NewFromCCache(cc, kc, client.DisablePAFXFAST(true))
	if err != nil {
		return nil, fmt.Errorf("security: no Kerberos credentials (kinit first) in credential cache %s: %w", path, err)
	}
	return finish(cl, nil, kc, rules)
}

var errEmptyCCache = errors.New("empty credential cache")

// loadCCache reads a credential cache; gokrb5 indexes an empty or
// truncated one out of bounds.
func loadCCache(path string) (cc *credentials.CCache, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, errEmptyCCache
	}
	defer func() {
		if r := recover(); r != nil {
			cc, err = nil, fmt.Errorf("malformed credential cache: %v", r)
		}
	}()
	cc = new(credentials.CCache)
	if err := cc.Unmarshal(b); err != nil {
		return nil, err
	}
	return cc, nil
}

// warnKeytabMode logs a keytab that others than its owner may read:
// whoever reads it is the service.
func warnKeytabMode(path string) {
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		slog.Warn("security: keytab is readable by its group or others; make it mode 0600 or 0400", "keytab", path, "mode", fi.Mode().Perm().String())
	}
}

// LoginFromKeytab logs principal (after _HOST substitution by the caller)
// in from the keytab file at path.
func LoginFromKeytab(principal, path string, rules *AuthToLocal) (*Login, error) {
	kc, err := Krb5Config()
	if err != nil {
		return nil, err
	}
	return LoginFromKeytabFile(kc, principal, path, rules)
}

// LoginFromKeytabFile is LoginFromKeytab with krb5.conf given.
func LoginFromKeytabFile(kc *config.Config, principal, path string, rules *AuthToLocal) (*Login, error) {
	if principal == "" || path == "" {
		return nil, fmt.Errorf("security: kerberos needs a principal and a keytab (got %q and %q)", principal, path)
	}
	kt, err := keytab.Load(path)
	if err != nil {
		return nil, fmt.Errorf("security: loading keytab %s: %w", path, err)
	}
	warnKeytabMode(path)
	name, _, realm := SplitPrincipal(principal)
	if _, inst, _ := SplitPrincipal(principal); inst != "" {
		name += "/" + inst
	}
	if realm == "" {
		realm = kc.LibDefaults.DefaultRealm
	}
	cl := client.NewWithKeytab(name, realm, kt, kc, client.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		return nil, fmt.Errorf("security: login of %s from keytab %s failed: %w", principal, path, err)
	}
	return finish(cl, kt, kc, rules)
}

func finish(cl *client.Client, kt *keytab.Keytab, kc *config.Config, rules *AuthToLocal) (*Login, error) {
	if rules == nil {
		rules, _ = ParseAuthToLocal("", "")
	}
	if rules.DefaultRealm == "" {
		rules.DefaultRealm = kc.LibDefaults.DefaultRealm
	}
	full := cl.Credentials.CName().PrincipalNameString() + "@" + cl.Credentials.Realm()
	user, err := rules.ShortName(full)
	if err != nil {
		return nil, fmt.Errorf("security: %w", err)
	}
	return &Login{Client: cl, Principal: full, User: user, Keytab: kt, Krb5: kc}, nil
}
