package e2e

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/gwtest"
	"github.com/stratafs/strata/internal/nfsclient"
	"github.com/stratafs/strata/internal/testcluster"
)

// secureGateway is a secure cluster (authentication) for a gateway that
// logs in from a keytab of its own and may act for one user from
// 127.0.0.1 (hadoop.proxyuser.<gateway>).
type secureGateway struct {
	r         *secureRealm
	settings  map[string]string // the cluster's
	principal string            // the gateway's, <gateway>/localhost@REALM
	keytab    string            // the principal's
	p         *testcluster.Processes
	nn        *hdfs.Client // the harness's, as the superuser nn
}

func startSecureGateway(t *testing.T, gateway, user string) *secureGateway {
	t.Helper()
	g := &secureGateway{r: startRealm(t)}
	g.principal = gateway + "/localhost@" + g.r.kdc.Realm
	g.keytab = filepath.Join(g.r.dir, gateway+".keytab")
	if err := g.r.kdc.AddService(g.keytab, gateway+"/localhost"); err != nil {
		t.Fatal(err)
	}
	g.settings = g.r.settings("authentication")
	g.settings["hadoop.proxyuser."+gateway+".hosts"] = "127.0.0.1"
	g.settings["hadoop.proxyuser."+gateway+".users"] = user
	nnLogin := g.r.testLogin(t, g.settings)
	g.p = testcluster.NewProcess(t, testcluster.Config{DataNodes: 1, Conf: g.settings})
	var err error
	if g.nn, err = hdfs.New(hdfs.Options{Addr: g.p.Addr(), User: "nn", Login: nnLogin}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.nn.Close() })
	return g
}

// command runs the gateway's binary as an operator would: the cluster's
// authentication and NameNode principal, its own principal and keytab
// under prefix.kerberos.principal and prefix.keytab.file (Hadoop's keys
// for the gateway), and no ticket cache, so the keytab is its only login.
func (g *secureGateway) command(prefix string, args ...string) *exec.Cmd {
	var opts []string
	for _, k := range []string{"hadoop.security.authentication", "dfs.namenode.kerberos.principal"} {
		opts = append(opts, "-D", k+"="+g.settings[k])
	}
	opts = append(opts, "-D", prefix+".kerberos.principal="+g.principal, "-D", prefix+".keytab.file="+g.keytab)
	cmd := g.p.Command(append(opts, args...)...)
	cmd.Env = append(os.Environ(), "KRB5CCNAME=FILE:"+filepath.Join(g.r.dir, "no-cache"))
	return cmd
}

// TestSecureNFSGatewayBinary runs `strata nfs3` on a secure cluster as an
// operator would: logged in from its own keytab (nfs.kerberos.principal,
// nfs.keytab.file, Hadoop's keys), with no ticket cache of its own, acting
// for each AUTH_UNIX uid's user as a proxy user. What root writes through
// it is root's; a user the NameNode's hadoop.proxyuser.nfs rules do not
// name gets nothing.
func TestSecureNFSGatewayBinary(t *testing.T) {
	g := startSecureGateway(t, "nfs", "root")
	nn := g.nn

	// The superuser (nn) makes root a home.
	ctx := context.Background()
	if err := nn.Mkdirs(ctx, "/user/root", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := nn.SetOwner(ctx, "/user/root", "root", ""); err != nil {
		t.Fatal(err)
	}

	cmd := g.command("nfs", "nfs3", "-port", "0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	addrc := make(chan string, 1)
	var logb syncBuffer
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`serving NFSv3 and MOUNT.* addr=(\S+)`)
		for sc.Scan() {
			logb.Write([]byte(sc.Text() + "\n"))
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addrc <- m[1]
			}
		}
	}()
	var addr string
	select {
	case addr = <-addrc:
	case <-time.After(30 * time.Second):
		t.Fatalf("nfs3 did not start:\n%s", logb.String())
	}

	root, err := nfsclient.Dial(addr, "/", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	data := strings.Repeat("through the gateway\n", 20000)
	if _, err := root.Copy("/user/root/f.txt", 0o644, strings.NewReader(data), 256<<10, 4); err != nil {
		t.Fatalf("NFS write as root: %v\n%s", err, logb.String())
	}
	st, err := nn.Stat(ctx, "/user/root/f.txt")
	if err != nil || st.Owner != "root" || st.Length != int64(len(data)) {
		t.Fatalf("the file written as root: %+v, %v", st, err)
	}
	f, err := nn.Open(ctx, "/user/root/f.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(got) != data {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
	// nobody (65534) is not in hadoop.proxyuser.nfs.users: /user, which
	// anyone may list (0755), is listed for root and refused for nobody.
	if ents, err := root.ReadDirPlus("/user"); err != nil || len(ents) == 0 {
		t.Fatalf("root listing /user: %v", err)
	}
	other, err := nfsclient.Dial(addr, "/", 65534, 65534)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ReadDirPlus("/user"); err == nil {
		t.Error("the gateway listed /user for a user its proxy rules do not name")
	}
	if strings.Contains(logb.String(), "no Kerberos credentials") {
		t.Errorf("the gateway looked for a ticket cache besides its keytab:\n%s", logb.String())
	}
}

// TestSecureFUSEKeytabBinary mounts with `strata fuse` logged in from a
// keytab of its own (strata.fuse.kerberos.principal/.keytab.file): the
// mount's own uid acts as the principal's user (fuse), another uid as
// its user through hadoop.proxyuser.fuse, and a uid the rules do not
// name gets EIO.
func TestSecureFUSEKeytabBinary(t *testing.T) {
	gwtest.NeedFUSE(t)
	if os.Geteuid() != 0 {
		t.Skip("acting as other uids toward the mount needs root")
	}
	if u, err := user.LookupId("1"); err != nil || u.Username != "daemon" {
		t.Skip("no local user daemon with uid 1")
	}
	g := startSecureGateway(t, "fuse", "daemon")
	nn := g.nn
	ctx := context.Background()
	if err := nn.Mkdirs(ctx, "/shared", 0o777); err != nil {
		t.Fatal(err)
	}
	if err := nn.SetPermission(ctx, "/shared", 0o777); err != nil {
		t.Fatal(err)
	}

	mnt := t.TempDir()
	for _, d := range []string{filepath.Dir(mnt), mnt} {
		os.Chmod(d, 0o755)
	}
	cmd := g.command("strata.fuse", "fuse", "-o", "allow_other,attr_timeout=0,entry_timeout=0", mnt)
	var logb syncBuffer
	cmd.Stderr = &logb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logb.String(), "msg=mounted") {
		if time.Now().After(deadline) {
			t.Fatalf("strata fuse did not mount:\n%s", logb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(mnt, "shared", "by-mount"), []byte("m"), 0o644); err != nil {
		t.Fatalf("write as the mounting uid: %v\n%s", err, logb.String())
	}
	if err := gwtest.AsFSUID(1, func() error {
		return os.WriteFile(filepath.Join(mnt, "shared", "by-daemon"), []byte("d"), 0o644)
	}); err != nil {
		t.Fatalf("write as daemon: %v\n%s", err, logb.String())
	}
	for name, owner := range map[string]string{"by-mount": "fuse", "by-daemon": "daemon"} {
		if st, err := nn.Stat(ctx, "/shared/"+name); err != nil || st.Owner != owner {
			t.Errorf("/shared/%s: owner %q (%v), want %s", name, st.Owner, err, owner)
		}
	}
	err := gwtest.AsFSUID(65534, func() error {
		_, err := os.ReadDir(filepath.Join(mnt, "shared"))
		return err
	})
	if !errors.Is(err, syscall.EIO) {
		t.Errorf("nobody through the mount: %v\n%s", err, logb.String())
	}
	// The daemon logs the refusal after it answers the kernel, and its
	// stderr reaches the buffer through a pipe: wait for the line.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logb.String(), "User: fuse is not allowed to impersonate nobody"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("the mount did not log why nobody was refused:\n%s", logb.String())
			break
		}
	}
}
