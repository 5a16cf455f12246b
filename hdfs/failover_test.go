package hdfs

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// fakeNN answers getFileInfo (a directory for "/", not found otherwise)
// and renewLease, or StandbyException for both while standby.
type fakeNN struct {
	srv  *ipc.Server
	addr string

	mu      sync.Mutex
	standby bool
	renewed []string // client names
	stats   int
}

func startFakeNN(t *testing.T, standby bool) *fakeNN {
	t.Helper()
	n := &fakeNN{srv: ipc.NewServer(ipc.ServerConfig{}), standby: standby}
	check := func() error {
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.standby {
			return ipc.Errorf(ipc.ClassStandby, "Operation category READ is not supported in state standby")
		}
		return nil
	}
	n.srv.Register(ClientProtocol, map[string]ipc.Method{
		"getFileInfo": ipc.Unary(func(ctx context.Context, req *hdfspb.GetFileInfoRequestProto) (*hdfspb.GetFileInfoResponseProto, error) {
			if err := check(); err != nil {
				return nil, err
			}
			n.mu.Lock()
			n.stats++
			n.mu.Unlock()
			if req.GetSrc() != "/" {
				return &hdfspb.GetFileInfoResponseProto{}, nil
			}
			return &hdfspb.GetFileInfoResponseProto{Fs: &hdfspb.HdfsFileStatusProto{
				FileType: hdfspb.HdfsFileStatusProto_IS_DIR.Enum(), Path: []byte{}, Length: proto.Uint64(0),
				Permission: &hdfspb.FsPermissionProto{Perm: proto.Uint32(0o755)}, Owner: proto.String("hdfs"), Group: proto.String("supergroup"),
				ModificationTime: proto.Uint64(0), AccessTime: proto.Uint64(0),
			}}, nil
		}),
		"renewLease": ipc.Unary(func(ctx context.Context, req *hdfspb.RenewLeaseRequestProto) (*hdfspb.RenewLeaseResponseProto, error) {
			if err := check(); err != nil {
				return nil, err
			}
			n.mu.Lock()
			n.renewed = append(n.renewed, req.GetClientName())
			n.mu.Unlock()
			return &hdfspb.RenewLeaseResponseProto{}, nil
		}),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n.addr = ln.Addr().String()
	go n.srv.Serve(ln)
	t.Cleanup(func() { n.srv.Close() })
	return n
}

func (n *fakeNN) setStandby(on bool) {
	n.mu.Lock()
	n.standby = on
	n.mu.Unlock()
}

func (n *fakeNN) served() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stats
}

func (n *fakeNN) renewals(name string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := 0
	for _, r := range n.renewed {
		if r == name {
			k++
		}
	}
	return k
}

func haConf(ns string, addrs ...string) *conf.Configuration {
	c := conf.New()
	c.Set("dfs.nameservices", ns)
	ids := ""
	for i, a := range addrs {
		id := "nn" + string(rune('1'+i))
		if ids != "" {
			ids += ","
		}
		ids += id
		c.Set("dfs.namenode.rpc-address."+ns+"."+id, a)
	}
	c.Set("dfs.ha.namenodes."+ns, ids)
	c.Set("dfs.client.failover.sleep.base.millis", "1")
	c.Set("dfs.client.failover.sleep.max.millis", "5")
	return c
}

// hdfs://ns1 resolves through the nameservice keys, keeps its authority
// in URI, and its calls reach the active NameNode whichever it is.
func TestNameserviceURIFailsOver(t *testing.T) {
	nn1, nn2 := startFakeNN(t, true), startFakeNN(t, false)
	c := haConf("ns1", nn1.addr, nn2.addr)
	fsys, err := fs.Get(context.Background(), "hdfs://ns1/", fs.Env{Conf: c, User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	if got := fsys.URI().String(); got != "hdfs://ns1" {
		t.Fatalf("URI %s, want hdfs://ns1", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if st, err := fsys.Stat(ctx, "/"); err != nil || !st.IsDir {
		t.Fatalf("stat /: %+v, %v", st, err)
	}
	if _, err := fsys.Stat(ctx, "/nope"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stat /nope: %v, want not exist (a NameNode answer is not failed over)", err)
	}
	// The active one moves back to nn1.
	nn2.setStandby(true)
	nn1.setStandby(false)
	if _, err := fsys.Stat(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if s1, s2 := nn1.served(), nn2.served(); s1 != 1 || s2 != 2 {
		t.Fatalf("nn1 served %d, nn2 %d; want 1 and 2", s1, s2)
	}
}

// Leases are renewed on whichever NameNode is active, across a failover.
func TestLeaseRenewalFailsOver(t *testing.T) {
	nn1, nn2 := startFakeNN(t, false), startFakeNN(t, true)
	opts, err := OptionsFrom(haConf("ns1", nn1.addr, nn2.addr), "ns1")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	cl.renew = 10 * time.Millisecond
	cl.startRenewing()
	defer cl.stopRenewing()
	waitFor(t, "a renewal on nn1", func() bool { return nn1.renewals(cl.name) > 0 })
	nn1.setStandby(true)
	nn2.setStandby(false)
	waitFor(t, "a renewal on nn2 after failover", func() bool { return nn2.renewals(cl.name) > 0 })
	nn1.srv.Close()
	before := nn2.renewals(cl.name)
	waitFor(t, "renewals on nn2 to go on with nn1 gone", func() bool { return nn2.renewals(cl.name) > before+2 })
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestOptionsFrom(t *testing.T) {
	o, err := OptionsFrom(conf.New(), "nn.example.com")
	if err != nil || len(o.Addrs) != 1 || o.Addrs[0] != "nn.example.com:8020" || o.Authority != "nn.example.com" {
		t.Fatalf("plain host: %+v, %v", o, err)
	}
	c := haConf("ns1", "a:1", "b:2", "c:3")
	c.Set("dfs.client.failover.max.attempts", "0")
	o, err = OptionsFrom(c, "ns1")
	if err != nil || len(o.Addrs) != 3 || o.Addrs[2] != "c:3" || o.FailoverMaxAttempts != -1 || o.FailoverSleepBase != time.Millisecond {
		t.Fatalf("ns1: %+v, %v", o, err)
	}
	c.Set("dfs.ha.namenodes.ns1", "nn1,nn9")
	if _, err := OptionsFrom(c, "ns1"); err == nil {
		t.Fatal("a nameservice member without an address was accepted")
	}
	c = haConf("ns1", "a:1", "b:2")
	c.Set("dfs.client.failover.sleep.max.millis", "-3")
	if _, err := OptionsFrom(c, "ns1"); err == nil {
		t.Fatal("a negative sleep was accepted")
	}
}

func TestNewAddrs(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("no address accepted")
	}
	if _, err := New(Options{Addrs: []string{"a:1", ""}}); err == nil {
		t.Fatal("an empty address accepted")
	}
	c, err := New(Options{Addr: "a:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.nn.(*ipc.Client); !ok || c.URI().Host != "a:1" {
		t.Fatalf("one address: %T, %s", c.nn, c.URI())
	}
	h, err := New(Options{Addrs: []string{"a:1", "b:2"}, Authority: "ns1"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if f, ok := h.nn.(*ipc.FailoverClient); !ok || len(f.Addrs()) != 2 || h.URI().String() != "hdfs://ns1" {
		t.Fatalf("two addresses: %T, %s", h.nn, h.URI())
	}
}
