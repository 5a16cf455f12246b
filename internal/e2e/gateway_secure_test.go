package e2e

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/gwtest"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/nfsclient"
	"github.com/stratafs/strata/internal/testcluster"
)

// TestSecureNFSGatewayBinary runs `strata nfs3` on a secure cluster as an
// operator would: logged in from its own keytab (nfs.kerberos.principal,
// nfs.keytab.file, Hadoop's keys), with no ticket cache of its own, acting
// for each AUTH_UNIX uid's user as a proxy user. What root writes through
// it is root's; a user the NameNode's hadoop.proxyuser.nfs rules do not
// name gets nothing.
func TestSecureNFSGatewayBinary(t *testing.T) {
	r := startRealm(t)
	t.Setenv("KRB5_CONFIG", r.kdc.ConfigPath)
	t.Setenv("HADOOP_USER_NAME", "nn") // the harness's calls; secure mode ignores it
	nfsKT := filepath.Join(r.dir, "nfs.keytab")
	if err := r.kdc.AddService(nfsKT, "nfs/localhost"); err != nil {
		t.Fatal(err)
	}
	settings := r.settings("authentication")
	settings["hadoop.proxyuser.nfs.hosts"] = "127.0.0.1"
	settings["hadoop.proxyuser.nfs.users"] = "root"
	// The harness (and the client below) speak to the NameNode as nn.
	nnLogin := r.login(t, r.nn_)
	pc := conf.New()
	for k, v := range settings {
		pc.Set(k, v)
	}
	if err := ipc.SetLogin(nnLogin, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ipc.SetLogin(nil, nil) })
	p := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1, Conf: settings})

	// The superuser (nn) makes root a home.
	nn, err := hdfs.New(hdfs.Options{Addr: p.Addr(), User: "nn", Login: nnLogin})
	if err != nil {
		t.Fatal(err)
	}
	defer nn.Close()
	ctx := context.Background()
	if err := nn.Mkdirs(ctx, "/user/root", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := nn.SetOwner(ctx, "/user/root", "root", ""); err != nil {
		t.Fatal(err)
	}

	var opts []string
	for _, k := range []string{"hadoop.security.authentication", "dfs.namenode.kerberos.principal"} {
		opts = append(opts, "-D", k+"="+settings[k])
	}
	opts = append(opts, "-D", "nfs.kerberos.principal=nfs/localhost@"+r.kdc.Realm, "-D", "nfs.keytab.file="+nfsKT)
	cmd := p.Command(append(opts, "nfs3", "-port", "0")...)
	cmd.Env = append(os.Environ(), "KRB5CCNAME=FILE:"+filepath.Join(r.dir, "no-cache"))
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
	r := startRealm(t)
	t.Setenv("KRB5_CONFIG", r.kdc.ConfigPath)
	t.Setenv("HADOOP_USER_NAME", "nn") // the harness's calls; secure mode ignores it
	fuseKT := filepath.Join(r.dir, "fuse.keytab")
	if err := r.kdc.AddService(fuseKT, "fuse/localhost"); err != nil {
		t.Fatal(err)
	}
	settings := r.settings("authentication")
	settings["hadoop.proxyuser.fuse.hosts"] = "127.0.0.1"
	settings["hadoop.proxyuser.fuse.users"] = "daemon"
	nnLogin := r.login(t, r.nn_)
	pc := conf.New()
	for k, v := range settings {
		pc.Set(k, v)
	}
	if err := ipc.SetLogin(nnLogin, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ipc.SetLogin(nil, nil) })
	p := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1, Conf: settings})
	nn, err := hdfs.New(hdfs.Options{Addr: p.Addr(), User: "nn", Login: nnLogin})
	if err != nil {
		t.Fatal(err)
	}
	defer nn.Close()
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
	var opts []string
	for _, k := range []string{"hadoop.security.authentication", "dfs.namenode.kerberos.principal"} {
		opts = append(opts, "-D", k+"="+settings[k])
	}
	opts = append(opts, "-D", "strata.fuse.kerberos.principal=fuse/localhost@"+r.kdc.Realm, "-D", "strata.fuse.keytab.file="+fuseKT)
	cmd := p.Command(append(opts, "fuse", "-o", "allow_other,attr_timeout=0,entry_timeout=0", mnt)...)
	cmd.Env = append(os.Environ(), "KRB5CCNAME=FILE:"+filepath.Join(r.dir, "no-cache"))
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
	err = gwtest.AsFSUID(65534, func() error {
		_, err := os.ReadDir(filepath.Join(mnt, "shared"))
		return err
	})
	if !errors.Is(err, syscall.EIO) || !strings.Contains(logb.String(), "User: fuse is not allowed to impersonate nobody") {
		t.Errorf("nobody through the mount: %v\n%s", err, logb.String())
	}
}
