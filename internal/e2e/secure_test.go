package e2e

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	colinmarc "github.com/colinmarc/hdfs/v2"
	krbclient "github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/jobtracker"
	"github.com/stratafs/strata/internal/minikdc"
	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/proto/ipcpb"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/security"
	"github.com/stratafs/strata/internal/testcluster"
)

// secureRealm is a KDC with the principals of a secure cluster: the
// NameNode's and DataNode's services (keytabs), and users alice and gw
// (a gateway allowed to act as carol) with tickets in credential caches.
// The test's daemons find it through KRB5_CONFIG; the harness's own calls
// (waiting for DataNodes) go as the NameNode's principal, the superuser.
type secureRealm struct {
	kdc            *minikdc.KDC
	krb5           *krbconfig.Config
	dir            string
	nnKT, dnKT     string
	httpKT         string // HTTP/localhost: SPNEGO on the NameNodes' web ports
	alice, gw, nn_ string // credential caches
	// dataProtection, when set, is the cluster's data transfer
	// protection, which runAs gives the CLI.
	dataProtection string
}

func startRealm(t *testing.T) *secureRealm {
	t.Helper()
	if err := minikdc.Available(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	kdc, err := minikdc.Start(dir, minikdc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kdc.Close() })
	t.Setenv("KRB5_CONFIG", kdc.ConfigPath)
	t.Setenv("HADOOP_USER_NAME", "nn")
	r := &secureRealm{kdc: kdc, dir: dir, nnKT: filepath.Join(dir, "nn.keytab"), dnKT: filepath.Join(dir, "dn.keytab")}
	if r.krb5, err = krbconfig.Load(kdc.ConfigPath); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(kdc.AddService(r.nnKT, "nn/localhost"))
	must(kdc.AddService(r.dnKT, "dn/localhost"))
	r.httpKT = filepath.Join(dir, "http.keytab")
	must(kdc.AddService(r.httpKT, "HTTP/localhost"))
	for _, u := range []string{"alice", "gw"} {
		must(kdc.AddUser(u, u+"-pw"))
	}
	r.alice, r.gw, r.nn_ = filepath.Join(dir, "alice.cc"), filepath.Join(dir, "gw.cc"), filepath.Join(dir, "nn.cc")
	must(kdc.Kinit(r.alice, "alice", "alice-pw", 0))
	must(kdc.Kinit(r.gw, "gw", "gw-pw", 0))
	must(kdc.KinitKeytab(r.nn_, r.nnKT, "nn/localhost"))
	return r
}

func (r *secureRealm) settings(protection string) map[string]string {
	return map[string]string{
		"hadoop.security.authentication":  "kerberos",
		"hadoop.rpc.protection":           protection,
		"dfs.namenode.kerberos.principal": "nn/_HOST@" + r.kdc.Realm,
		"dfs.namenode.keytab.file":        r.nnKT,
		"dfs.datanode.kerberos.principal": "dn/_HOST@" + r.kdc.Realm,
		"dfs.datanode.keytab.file":        r.dnKT,
		// WebHDFS and the HA members' /strata/ha/ endpoints need SPNEGO.
		"dfs.web.authentication.kerberos.principal": "HTTP/_HOST@" + r.kdc.Realm,
		"dfs.web.authentication.kerberos.keytab":    r.httpKT,
		"hadoop.proxyuser.gw.users":                 "carol",
		"hadoop.proxyuser.gw.hosts":                 "127.0.0.1",
	}
}

// trackerKeytabs makes keytabs for the JobTracker's (jt/localhost) and
// the TaskTrackers' (tt/localhost) principals and adds their keys to
// settings.
func (r *secureRealm) trackerKeytabs(t *testing.T, settings map[string]string) (jtKT, ttKT string) {
	t.Helper()
	jtKT, ttKT = filepath.Join(r.dir, "jt.keytab"), filepath.Join(r.dir, "tt.keytab")
	if err := r.kdc.AddService(jtKT, "jt/localhost"); err != nil {
		t.Fatal(err)
	}
	if err := r.kdc.AddService(ttKT, "tt/localhost"); err != nil {
		t.Fatal(err)
	}
	settings["mapreduce.jobtracker.kerberos.principal"] = "jt/_HOST@" + r.kdc.Realm
	settings["mapreduce.jobtracker.keytab.file"] = jtKT
	settings["mapreduce.tasktracker.kerberos.principal"] = "tt/_HOST@" + r.kdc.Realm
	settings["mapreduce.tasktracker.keytab.file"] = ttKT
	return jtKT, ttKT
}

// testLogin makes the NameNode's principal this test process's login, for
// the harness's own client, and returns it.
func (r *secureRealm) testLogin(t *testing.T, settings map[string]string) *security.Login {
	t.Helper()
	pc := conf.New()
	for k, v := range settings {
		pc.Set(k, v)
	}
	l, err := security.LoginFromKeytabFile(r.krb5, "nn/localhost@"+r.kdc.Realm, r.nnKT, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ipc.SetLogin(l, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ipc.SetLogin(nil, nil) })
	return l
}

// login is a ticket-cache login of this test process.
func (r *secureRealm) login(t *testing.T, cc string) *security.Login {
	t.Helper()
	l, err := security.LoginFromCCacheFile(r.krb5, cc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// colinmarc is a colinmarc/hdfs client with the ticket in cc and, if
// dataProtection is set, that data transfer protection.
func (r *secureRealm) colinmarc(t *testing.T, addr, cc string, dataProtection ...string) (*colinmarc.Client, error) {
	t.Helper()
	cache, err := credentials.LoadCCache(cc)
	if err != nil {
		return nil, err
	}
	kc, err := krbclient.NewFromCCache(cache, r.krb5, krbclient.DisablePAFXFAST(true))
	if err != nil {
		return nil, err
	}
	opts := colinmarc.ClientOptions{Addresses: strings.Split(addr, ","), KerberosClient: kc, KerberosServicePrincipleName: "nn/_HOST"}
	if len(dataProtection) > 0 {
		opts.DataTransferProtection = dataProtection[0]
	}
	return colinmarc.NewClient(opts)
}

// gssInitiateFailed is what the server tells a client whose ticket it
// refuses.
const gssInitiateFailed = "GSS initiate failed"

// runAs runs the strata CLI with a credential cache (and
// HADOOP_USER_NAME=root, which secure mode must ignore).
func (r *secureRealm) runAs(p *testcluster.Processes, prot, cc string, stdin io.Reader, args ...string) (string, string, int) {
	var opts []string
	for _, k := range []string{"hadoop.security.authentication", "hadoop.rpc.protection", "dfs.namenode.kerberos.principal"} {
		opts = append(opts, "-D", k+"="+r.settings(prot)[k])
	}
	// The cluster's data transfer protection, when the test gave it one:
	// the client protects its block transfers at that level.
	if r.dataProtection != "" {
		opts = append(opts, "-D", "dfs.data.transfer.protection="+r.dataProtection)
	}
	cmd := p.Command(append(opts, args...)...)
	cmd.Env = append(os.Environ(), "KRB5CCNAME=FILE:"+cc, "HADOOP_USER_NAME=root")
	cmd.Stdin = stdin
	return runCmd(cmd)
}

// runCmd runs cmd and returns its output, its error output and its exit
// code (0 also when it could not be started: the output says nothing then).
func runCmd(cmd *exec.Cmd) (string, string, int) {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	}
	return out.String(), errb.String(), 0
}

// TestSecureIPC runs a NameNode and a DataNode in kerberos mode at each
// hadoop.rpc.protection level: colinmarc/hdfs with a ticket and strata's
// CLI list, write and read; a file's owner is the principal's user, never
// HADOOP_USER_NAME; no ticket, an expired ticket, an impersonation
// without a proxy-user rule and a user posing as a DataNode are refused
// with Hadoop's errors.
func TestSecureIPC(t *testing.T) {
	r := startRealm(t)
	for i, prot := range []string{"authentication", "integrity", "privacy"} {
		t.Run(prot, func(t *testing.T) {
			// Data transfer protection at the same level as the RPCs:
			// block tokens are the SASL credentials on the DataNode's port.
			settings := r.settings(prot)
			settings["dfs.block.access.token.enable"] = "true"
			settings["dfs.data.transfer.protection"] = prot
			r.dataProtection = prot
			t.Cleanup(func() { r.dataProtection = "" })
			r.testLogin(t, settings)
			p := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1, Conf: settings})
			_, port, _ := net.SplitHostPort(p.Addr())
			addr := "localhost:" + port
			ctx := ctxT(t)

			if out, errs, code := r.runAs(p, prot, r.nn_, nil, "dfs", "-mkdir", "-p", "/tmp"); code != 0 {
				t.Fatalf("mkdir as nn: %s %s", out, errs)
			}
			if out, errs, code := r.runAs(p, prot, r.nn_, nil, "dfs", "-chmod", "1777", "/tmp"); code != 0 {
				t.Fatalf("chmod as nn: %s %s", out, errs)
			}

			// colinmarc/hdfs with alice's ticket: write, read, list.
			cl, err := r.colinmarc(t, addr, r.alice, prot)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			data := bytes.Repeat([]byte("secure "+prot+"\n"), 20000)
			w, err := cl.Create("/tmp/colinmarc")
			if err != nil {
				t.Fatalf("colinmarc create: %v", err)
			}
			if _, err := w.Write(data); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("colinmarc close: %v", err)
			}
			got, err := cl.ReadFile("/tmp/colinmarc")
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("colinmarc read back %d bytes, %v", len(got), err)
			}
			// Without data transfer protection the DataNode refuses it.
			plain, err := r.colinmarc(t, addr, r.alice)
			if err == nil {
				_, err = plain.ReadFile("/tmp/colinmarc")
				plain.Close()
			}
			if err == nil {
				t.Fatal("colinmarc without data transfer protection read the file")
			}
			infos, err := cl.ReadDir("/tmp")
			if err != nil || len(infos) != 1 {
				t.Fatalf("colinmarc ReadDir: %v %v", infos, err)
			}
			if owner := infos[0].Sys().(*colinmarc.FileStatus).GetOwner(); owner != "alice" {
				t.Fatalf("owner of a file alice wrote = %q", owner)
			}

			// strata's CLI with alice's ticket and HADOOP_USER_NAME=root.
			if out, errs, code := r.runAs(p, prot, r.alice, strings.NewReader("from the cli\n"), "dfs", "-put", "-", "/tmp/cli"); code != 0 {
				t.Fatalf("put: %s %s", out, errs)
			}
			out, errs, code := r.runAs(p, prot, r.alice, nil, "dfs", "-cat", "/tmp/cli", "/tmp/colinmarc")
			if code != 0 || !strings.HasPrefix(out, "from the cli\n") || len(out) != len("from the cli\n")+len(data) {
				t.Fatalf("cat: %d bytes %s", len(out), errs)
			}
			out, errs, code = r.runAs(p, prot, r.alice, nil, "dfs", "-ls", "/tmp")
			if code != 0 || !strings.Contains(out, " alice ") || strings.Contains(out, " root ") {
				t.Fatalf("ls: %s %s", out, errs)
			}
			// alice is not the superuser, whatever HADOOP_USER_NAME says.
			if _, errs, code := r.runAs(p, prot, r.alice, nil, "dfs", "-mkdir", "/alice-at-root"); code == 0 || !strings.Contains(errs, "Permission denied: user=alice") {
				t.Fatalf("alice made a directory in /: %s", errs)
			}
			if i > 0 {
				return // the refusals do not depend on the protection level
			}

			// No ticket: refused with Hadoop's words, by either client.
			_, errs, code = r.runAs(p, prot, filepath.Join(r.dir, "none.cc"), nil, "dfs", "-ls", "/")
			if code == 0 || !strings.Contains(errs, "SIMPLE authentication is not enabled.  Available:[TOKEN, KERBEROS]") {
				t.Fatalf("no ticket: exit %d, %s", code, errs)
			}
			simple, err := colinmarc.NewClient(colinmarc.ClientOptions{Addresses: []string{addr}, User: "alice"})
			if err == nil {
				_, err = simple.Stat("/")
				simple.Close()
			}
			// colinmarc writes its connection context without reading the
			// refusal the server sent after the header, so it sees the
			// closed connection rather than the message.
			if err == nil {
				t.Fatal("colinmarc without Kerberos was served")
			}

			// An expired ticket (2 s, clock skew 2 s).
			short := filepath.Join(r.dir, "short.cc")
			if err := r.kdc.Kinit(short, "alice", "alice-pw", 2*time.Second); err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Second)
			if _, errs, code := r.runAs(p, prot, short, nil, "dfs", "-ls", "/"); code == 0 {
				t.Fatalf("expired ticket listed /: %s", errs)
			} else {
				t.Logf("expired ticket: %s", errs)
			}
			// colinmarc connects as it is made: the expired ticket fails
			// there (gokrb5 cannot renew it) or at the first call; a
			// credential cache that cannot be read fails the test.
			cache, err := credentials.LoadCCache(short)
			if err != nil {
				t.Fatal(err)
			}
			kc, err := krbclient.NewFromCCache(cache, r.krb5, krbclient.DisablePAFXFAST(true))
			if err != nil {
				t.Fatal(err)
			}
			c, err := colinmarc.NewClient(colinmarc.ClientOptions{Addresses: []string{addr}, KerberosClient: kc, KerberosServicePrincipleName: "nn/_HOST"})
			if err == nil {
				_, err = c.Stat("/")
				c.Close()
			}
			if err == nil || !strings.Contains(err.Error(), "TKT_EXPIRED") && !strings.Contains(err.Error(), gssInitiateFailed) {
				t.Fatalf("colinmarc with an expired ticket: %v", err)
			}

			// Impersonation: gw may act as carol (by the proxy-user rule),
			// alice may not.
			mkdir := func(l *security.Login, as, path string) error {
				c := ipc.NewClient(ipc.ClientConfig{Addr: addr, Login: l, User: as, Protocol: namenode.ClientProtocolName})
				defer c.Close()
				return c.Call(ctx, "mkdirs", &hdfspb.MkdirsRequestProto{Src: proto.String(path), Masked: &hdfspb.FsPermissionProto{Perm: proto.Uint32(0o755)}, CreateParent: proto.Bool(false)}, &hdfspb.MkdirsResponseProto{})
			}
			if err := mkdir(r.login(t, r.gw), "carol", "/tmp/carol"); err != nil {
				t.Fatalf("gw as carol: %v", err)
			}
			if out, _, _ := r.runAs(p, prot, r.alice, nil, "dfs", "-stat", "%u", "/tmp/carol"); strings.TrimSpace(out) != "carol" {
				t.Fatalf("owner of gw's directory for carol = %q", out)
			}
			err = mkdir(r.login(t, r.alice), "carol", "/tmp/not-carol")
			if !ipc.IsClass(err, security.ClassAuthorization) || !strings.Contains(err.Error(), "User: alice is not allowed to impersonate carol") {
				t.Fatalf("alice as carol: %v", err)
			}

			// A user cannot pose as a DataNode.
			fake := ipc.NewClient(ipc.ClientConfig{Addr: addr, Login: r.login(t, r.alice), Protocol: namenode.DatanodeProtocolName, ServerPrincipal: "nn/_HOST@" + r.kdc.Realm})
			defer fake.Close()
			err = fake.Call(context.Background(), "registerDatanode", &ipcpb.UserInformationProto{}, &ipcpb.UserInformationProto{})
			if !ipc.IsClass(err, security.ClassAuthorization) || !strings.Contains(err.Error(), "is not authorized for protocol "+namenode.DatanodeProtocolName) {
				t.Fatalf("alice as a DataNode: %v", err)
			}
			// Nor by opening with ClientProtocol and naming
			// DatanodeProtocol in the call's header, by which the call
			// is routed.
			smuggler := ipc.NewClient(ipc.ClientConfig{Addr: addr, Login: r.login(t, r.alice), Protocol: namenode.ClientProtocolName, CallProtocol: namenode.DatanodeProtocolName})
			defer smuggler.Close()
			reg := &dnpb.RegisterRequest{Registration: &dnpb.Registration{DatanodeUuid: proto.String("fake-dn")}}
			err = smuggler.Call(ctx, "register", reg, &dnpb.RegisterResponse{})
			if !ipc.IsClass(err, security.ClassAuthorization) || !strings.Contains(err.Error(), "User alice@"+r.kdc.Realm+" (auth:KERBEROS) is not authorized for protocol "+namenode.DatanodeProtocolName) {
				t.Fatalf("alice registering a DataNode over a ClientProtocol connection: %v", err)
			}
			// Nor call NamenodeProtocol (the balancer's), which the
			// superuser may.
			for _, cs := range []struct {
				cc string
				ok bool
			}{{r.alice, false}, {r.nn_, true}} {
				c := ipc.NewClient(ipc.ClientConfig{Addr: addr, Login: r.login(t, cs.cc), Protocol: namenode.NamenodeProtocolName})
				err := c.Call(ctx, "getBlockKeys", &ipcpb.UserInformationProto{}, &ipcpb.UserInformationProto{})
				c.Close()
				if refused := ipc.IsClass(err, security.ClassAuthorization); refused == cs.ok {
					t.Fatalf("NamenodeProtocol from %s: %v", cs.cc, err)
				}
			}
		})
	}
}

// TestSecureMapReduceTrackers runs a JobTracker and a TaskTracker in
// kerberos mode: the TaskTracker heartbeats with its keytab's principal,
// a user's job client lists jobs with a ticket, and a user cannot pose as
// a TaskTracker (InterTrackerProtocol takes the TaskTracker principal
// only).
func TestSecureMapReduceTrackers(t *testing.T) {
	r := startRealm(t)
	settings := r.settings("authentication")
	_, ttKT := r.trackerKeytabs(t, settings)
	r.testLogin(t, settings)
	p := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1, MapReduce: true, Conf: settings})
	_, port, _ := net.SplitHostPort(p.JobTrackerAddr())
	jt := "localhost:" + port

	// A job client with alice's ticket.
	cmd := p.Command("-D", "hadoop.security.authentication=kerberos", "-D", "mapreduce.jobtracker.kerberos.principal=jt/_HOST@"+r.kdc.Realm, "job", "-list")
	cmd.Env = append(os.Environ(), "KRB5CCNAME=FILE:"+r.alice)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("job -list as alice: %v\n%s", err, out)
	}

	heartbeat := func(l *security.Login) error {
		c := ipc.NewClient(ipc.ClientConfig{Addr: jt, Login: l, Protocol: jobtracker.InterTrackerProtocol, ServerPrincipal: "jt/_HOST@" + r.kdc.Realm})
		defer c.Close()
		return c.Call(context.Background(), "heartbeat", &mrpb.HeartbeatRequest{}, &mrpb.HeartbeatResponse{})
	}
	err := heartbeat(r.login(t, r.alice))
	if !ipc.IsClass(err, security.ClassAuthorization) || !strings.Contains(err.Error(), "is not authorized for protocol "+jobtracker.InterTrackerProtocol) {
		t.Fatalf("alice as a TaskTracker: %v", err)
	}
	ttLogin, err := security.LoginFromKeytabFile(r.krb5, "tt/localhost@"+r.kdc.Realm, ttKT, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Admitted, the empty heartbeat reaches the JobTracker, which
	// refuses it for its content only.
	if err := heartbeat(ttLogin); !ipc.IsClass(err, ipc.ClassIllegalArgument) || !strings.Contains(err.Error(), "heartbeat without a tracker name") {
		t.Fatalf("the TaskTracker principal's heartbeat: %v", err)
	}
	// alice cannot smuggle a heartbeat over a SubmissionProtocol
	// connection either.
	smuggler := ipc.NewClient(ipc.ClientConfig{Addr: jt, Login: r.login(t, r.alice), Protocol: jobtracker.SubmissionProtocol, CallProtocol: jobtracker.InterTrackerProtocol, ServerPrincipal: "jt/_HOST@" + r.kdc.Realm})
	defer smuggler.Close()
	err = smuggler.Call(context.Background(), "heartbeat", &mrpb.HeartbeatRequest{Tracker: proto.String("tracker_fake:localhost/127.0.0.1:1")}, &mrpb.HeartbeatResponse{})
	if !ipc.IsClass(err, security.ClassAuthorization) || !strings.Contains(err.Error(), "is not authorized for protocol "+jobtracker.InterTrackerProtocol) {
		t.Fatalf("alice heartbeating over a SubmissionProtocol connection: %v", err)
	}
	// The real TaskTracker's heartbeats (every 100 ms) go through.
	time.Sleep(time.Second)
	if log := p.TaskTrackerProcess(0).Log(); strings.Contains(log, "heartbeat failed") {
		t.Fatalf("TaskTracker heartbeats refused:\n%s", log)
	}
}

// TestSecureHA runs three NameNodes (one Raft group) and a DataNode in
// kerberos mode: the DataNode reports to every member with its principal,
// clients authenticate to whichever is active, and after the active is
// killed the new active serves the same ticket holders.
func TestSecureHA(t *testing.T) {
	r := startRealm(t)
	settings := r.settings("privacy")
	// The members check each other's SPNEGO on /strata/ha/ (version,
	// digests): WebHDFS's HTTP principal and keytab.
	httpKT := filepath.Join(r.dir, "http.keytab")
	if err := r.kdc.AddService(httpKT, "HTTP/localhost"); err != nil {
		t.Fatal(err)
	}
	settings["dfs.web.authentication.kerberos.principal"] = "HTTP/_HOST@" + r.kdc.Realm
	settings["dfs.web.authentication.kerberos.keytab"] = httpKT
	r.testLogin(t, settings)
	p := testcluster.NewProcess(t, testcluster.Config{NameNodes: 3, DataNodes: 1, Conf: settings})
	active, ok := p.WaitActive(30*time.Second, -1)
	if !ok {
		t.Fatal("no active NameNode")
	}
	var addrs []string
	for i := 0; i < p.NumNameNodes(); i++ {
		_, port, _ := net.SplitHostPort(p.NameNodeAddrAt(i))
		addrs = append(addrs, "localhost:"+port)
	}
	if out, errs, code := r.runAs(p, "privacy", r.nn_, nil, "dfs", "-mkdir", "-p", "/tmp"); code != 0 {
		t.Fatalf("mkdir: %s %s", out, errs)
	}
	if out, errs, code := r.runAs(p, "privacy", r.nn_, nil, "dfs", "-chmod", "1777", "/tmp"); code != 0 {
		t.Fatalf("chmod: %s %s", out, errs)
	}
	if out, errs, code := r.runAs(p, "privacy", r.alice, strings.NewReader("before failover\n"), "dfs", "-put", "-", "/tmp/ha"); code != 0 {
		t.Fatalf("put: %s %s", out, errs)
	}
	p.KillNameNodeAt(active)
	if _, ok := p.WaitActive(30*time.Second, active); !ok {
		t.Fatal("no new active NameNode")
	}
	out, errs, code := r.runAs(p, "privacy", r.alice, nil, "dfs", "-cat", "/tmp/ha")
	if code != 0 || out != "before failover\n" {
		t.Fatalf("cat after failover: %q %s", out, errs)
	}
	var live []string
	for i, a := range addrs {
		if i != active {
			live = append(live, a)
		}
	}
	cl, err := r.colinmarc(t, strings.Join(live, ","), r.alice)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if got, err := cl.ReadFile("/tmp/ha"); err != nil || string(got) != "before failover\n" {
		t.Fatalf("colinmarc after failover: %q %v", got, err)
	}
}

// TestSecureRequireWrappedRequests: with
// strata.ipc.sasl.require-wrapped-requests a NameNode at privacy refuses
// colinmarc/hdfs, which sends its requests unwrapped, and serves strata's
// CLI, which wraps them.
func TestSecureRequireWrappedRequests(t *testing.T) {
	r := startRealm(t)
	settings := r.settings("privacy")
	settings[security.KeyRequireWrappedRequests] = "true"
	r.testLogin(t, settings)
	p := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1, Conf: settings})
	_, port, _ := net.SplitHostPort(p.Addr())
	if out, errs, code := r.runAs(p, "privacy", r.alice, nil, "dfs", "-ls", "/"); code != 0 {
		t.Fatalf("strata CLI: %s %s", out, errs)
	}
	cl, err := r.colinmarc(t, "localhost:"+port, r.alice)
	if err == nil {
		_, err = cl.Stat("/")
		cl.Close()
	}
	if err == nil {
		t.Fatal("colinmarc's unwrapped requests were served")
	}
	t.Logf("colinmarc: %v", err)
}
