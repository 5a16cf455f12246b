// Package minikdc runs a real MIT Kerberos KDC (Debian's krb5-kdc), as
// Hadoop's MiniKdc does, for tests
// and for `strata local -secure`: its own realm, database, krb5.conf and
// keytabs in a directory, listening on 127.0.0.1 only.
//
// A KDC is a child process (krb5kdc -n); Close stops it. Principals are made
// with kadmin.local against the KDC's database file, so no kadmind runs.
// The krb5.conf it writes forces TCP (udp_preference_limit = 1) so gokrb5
// and the MIT tools talk to the same port, and disables DNS lookups so a
// test never leaves the machine. Clock skew is 2 s (not 5 min) so tests of
// expired tickets need wait only seconds; every process here shares a clock.
//
// Invariants: every file lives under Dir; the KDC binds to 127.0.0.1:Port;
// the environment a client needs (KRB5_CONFIG, KRB5CCNAME) is returned by
// Env and never set on the test process itself.
package minikdc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Tools are the programs the KDC needs; Available reports whether they are
// installed (Debian packages krb5-kdc, krb5-admin-server and krb5-user).
var Tools = []string{"krb5kdc", "kdb5_util", "kadmin.local", "kinit", "klist"}

// Available returns nil when every program in Tools is on $PATH or in
// /usr/sbin, else an error naming the missing ones and the packages.
func Available() error {
	var missing []string
	for _, t := range Tools {
		if _, err := lookTool(t); err != nil {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("minikdc: %s not installed (apt-get install krb5-kdc krb5-admin-server krb5-user)", strings.Join(missing, ", "))
	}
	return nil
}

func lookTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/usr/bin", "/sbin"} {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

// Options configure a KDC. Zero values take defaults.
type Options struct {
	// Realm defaults to STRATA.TEST.
	Realm string
	// MaxLife is the longest ticket the KDC issues (default 10h). Tests of
	// expiry ask kinit for short tickets instead (KinitPassword's lifetime).
	MaxLife time.Duration
}

// KDC is a running Kerberos KDC.
type KDC struct {
	Realm      string
	Dir        string
	Port       int
	ConfigPath string // krb5.conf for clients and servers

	kdcProfile string
	cmd        *exec.Cmd
	done       chan error
}

// Start makes the realm's database under dir (which must exist and be
// empty or new) and starts the KDC.
func Start(dir string, opt Options) (*KDC, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	if opt.Realm == "" {
		opt.Realm = "STRATA.TEST"
	}
	if opt.MaxLife == 0 {
		opt.MaxLife = 10 * time.Hour
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	k := &KDC{
		Realm:      opt.Realm,
		Dir:        dir,
		Port:       port,
		ConfigPath: filepath.Join(dir, "krb5.conf"),
		kdcProfile: filepath.Join(dir, "kdc.conf"),
	}
	if err := k.writeConfig(opt); err != nil {
		return nil, err
	}
	if out, err := k.run("kdb5_util", "create", "-s", "-r", k.Realm, "-P", "strata-master-key"); err != nil {
		return nil, fmt.Errorf("minikdc: kdb5_util create: %v: %s", err, out)
	}
	if err := k.start(); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *KDC) writeConfig(opt Options) error {
	life := fmt.Sprintf("%ds", int(opt.MaxLife/time.Second))
	krb5 := fmt.Sprintf(`[libdefaults]
	default_realm = %[1]s
	dns_lookup_kdc = false
	dns_lookup_realm = false
	dns_canonicalize_hostname = false
	rdns = false
	udp_preference_limit = 1
	clockskew = 2
	ticket_lifetime = %[3]s
	renew_lifetime = %[3]s
	forwardable = true
	default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
	default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
	permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96

[realms]
	%[1]s = {
		kdc = 127.0.0.1:%[2]d
		admin_server = 127.0.0.1:%[2]d
	}

[domain_realm]
	localhost = %[1]s
	127.0.0.1 = %[1]s
`, k.Realm, k.Port, life)
	kdc := fmt.Sprintf(`[kdcdefaults]
	kdc_listen = 127.0.0.1:%[2]d
	kdc_tcp_listen = 127.0.0.1:%[2]d

[realms]
	%[1]s = {
		database_name = %[3]s
		key_stash_file = %[4]s
		acl_file = %[5]s
		max_life = %[6]s
		max_renewable_life = %[6]s
		supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
		default_principal_flags = +renewable +forwardable
	}

[logging]
	kdc = FILE:%[7]s
`, k.Realm, k.Port, filepath.Join(k.Dir, "principal"), filepath.Join(k.Dir, "stash"),
		filepath.Join(k.Dir, "kadm5.acl"), life, filepath.Join(k.Dir, "kdc.log"))
	if err := os.WriteFile(filepath.Join(k.Dir, "kadm5.acl"), nil, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(k.ConfigPath, []byte(krb5), 0o644); err != nil {
		return err
	}
	return os.WriteFile(k.kdcProfile, []byte(kdc), 0o600)
}

// toolEnv is the environment of the MIT tools: this realm's files only.
func (k *KDC) toolEnv() []string {
	env := []string{"KRB5_CONFIG=" + k.ConfigPath, "KRB5_KDC_PROFILE=" + k.kdcProfile}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "KRB5") {
			env = append(env, e)
		}
	}
	return env
}

func (k *KDC) run(tool string, args ...string) ([]byte, error) {
	return k.runInput("", tool, args...)
}

func (k *KDC) runInput(stdin, tool string, args ...string) ([]byte, error) {
	path, err := lookTool(tool)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = k.toolEnv()
	cmd.Dir = k.Dir
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	return cmd.CombinedOutput()
}

func (k *KDC) start() error {
	path, err := lookTool("krb5kdc")
	if err != nil {
		return err
	}
	cmd := exec.Command(path, "-n", "-r", k.Realm, "-P", filepath.Join(k.Dir, "krb5kdc.pid"))
	cmd.Env = k.toolEnv()
	cmd.Dir = k.Dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("minikdc: start krb5kdc: %w", err)
	}
	k.cmd = cmd
	k.done = make(chan error, 1)
	go func() { k.done <- cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-k.done:
			k.done <- err
			return fmt.Errorf("minikdc: krb5kdc exited: %v: %s", err, out.String())
		default:
		}
		c, err := net.DialTimeout("tcp", k.Addr(), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	k.Close()
	return fmt.Errorf("minikdc: krb5kdc did not listen on %s: %s", k.Addr(), out.String())
}

// Addr is the KDC's host:port.
func (k *KDC) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(k.Port)) }

// Close stops the KDC. Files stay in Dir.
func (k *KDC) Close() error {
	if k.cmd == nil || k.cmd.Process == nil {
		return nil
	}
	_ = k.cmd.Process.Kill()
	select {
	case <-k.done:
	case <-time.After(5 * time.Second):
		return errors.New("minikdc: krb5kdc did not exit")
	}
	k.cmd = nil
	return nil
}

// Principal qualifies name with the realm unless it already names one.
func (k *KDC) Principal(name string) string {
	if strings.Contains(name, "@") {
		return name
	}
	return name + "@" + k.Realm
}

// AddUser makes a principal with a password (for kinit).
func (k *KDC) AddUser(name, password string) error {
	out, err := k.run("kadmin.local", "-r", k.Realm, "-q", fmt.Sprintf("addprinc -pw %s %s", password, k.Principal(name)))
	if err != nil || bytes.Contains(out, []byte("rror")) {
		return fmt.Errorf("minikdc: addprinc %s: %v: %s", name, err, out)
	}
	return nil
}

// AddService makes principals with random keys (e.g. "nn/localhost") and
// writes all their keys to one keytab file at path.
func (k *KDC) AddService(path string, names ...string) error {
	for _, n := range names {
		out, err := k.run("kadmin.local", "-r", k.Realm, "-q", "addprinc -randkey "+k.Principal(n))
		if err != nil || bytes.Contains(out, []byte("rror")) {
			return fmt.Errorf("minikdc: addprinc -randkey %s: %v: %s", n, err, out)
		}
		out, err = k.run("kadmin.local", "-r", k.Realm, "-q", fmt.Sprintf("ktadd -k %s -norandkey %s", path, k.Principal(n)))
		if err != nil || bytes.Contains(out, []byte("rror")) {
			return fmt.Errorf("minikdc: ktadd %s: %v: %s", n, err, out)
		}
	}
	return os.Chmod(path, 0o600)
}

// Kinit gets a ticket for a password principal into the credential cache
// at ccache, with the given lifetime (0: the KDC's maximum). Tickets can be
// as short as a few seconds, for expiry tests.
func (k *KDC) Kinit(ccache, name, password string, lifetime time.Duration) error {
	args := []string{"-c", ccache}
	if lifetime > 0 {
		args = append(args, "-l", fmt.Sprintf("%ds", int(lifetime/time.Second)))
	}
	args = append(args, k.Principal(name))
	out, err := k.runInput(password+"\n", "kinit", args...)
	if err != nil {
		return fmt.Errorf("minikdc: kinit %s: %v: %s", name, err, out)
	}
	return nil
}

// KinitKeytab gets a ticket from a keytab into ccache.
func (k *KDC) KinitKeytab(ccache, keytab, name string) error {
	out, err := k.run("kinit", "-c", ccache, "-k", "-t", keytab, k.Principal(name))
	if err != nil {
		return fmt.Errorf("minikdc: kinit -kt %s %s: %v: %s", keytab, name, err, out)
	}
	return nil
}

// Env is the environment a client process needs to use this realm and a
// credential cache: KRB5_CONFIG and KRB5CCNAME (ccache may be "").
func (k *KDC) Env(ccache string) []string {
	env := []string{"KRB5_CONFIG=" + k.ConfigPath}
	if ccache != "" {
		env = append(env, "KRB5CCNAME=FILE:"+ccache)
	}
	return env
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
