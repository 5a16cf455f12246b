package cli

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// startFakeNN serves getFileInfo ("/" is a directory) and setSafeMode,
// answering StandbyException for both when standby; served counts the
// calls it answered.
func startFakeNN(t *testing.T, standby bool) (addr string, served func() int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	answer := func() error {
		if standby {
			return ipc.Errorf(ipc.ClassStandby, "Operation category READ is not supported in state standby")
		}
		mu.Lock()
		n++
		mu.Unlock()
		return nil
	}
	s := ipc.NewServer(ipc.ServerConfig{})
	s.Register(hdfs.ClientProtocol, map[string]ipc.Method{
		"getFileInfo": ipc.Unary(func(ctx context.Context, req *hdfspb.GetFileInfoRequestProto) (*hdfspb.GetFileInfoResponseProto, error) {
			if err := answer(); err != nil || req.GetSrc() != "/" {
				return &hdfspb.GetFileInfoResponseProto{}, err
			}
			return &hdfspb.GetFileInfoResponseProto{Fs: &hdfspb.HdfsFileStatusProto{
				FileType: hdfspb.HdfsFileStatusProto_IS_DIR.Enum(), Path: []byte{}, Length: proto.Uint64(0),
				Permission: &hdfspb.FsPermissionProto{Perm: proto.Uint32(0o755)}, Owner: proto.String("hdfs"), Group: proto.String("supergroup"),
				ModificationTime: proto.Uint64(0), AccessTime: proto.Uint64(0),
			}}, nil
		}),
		"setSafeMode": ipc.Unary(func(ctx context.Context, req *hdfspb.SetSafeModeRequestProto) (*hdfspb.SetSafeModeResponseProto, error) {
			if err := answer(); err != nil {
				return nil, err
			}
			return &hdfspb.SetSafeModeResponseProto{Result: proto.Bool(false)}, nil
		}),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String(), func() int { mu.Lock(); defer mu.Unlock(); return n }
}

func haArgs(addrs ...string) []string {
	args := []string{"-fs", "hdfs://ns1", "-D", "dfs.nameservices=ns1", "-D", "dfs.ha.namenodes.ns1=nn1,nn2",
		"-D", "dfs.client.failover.sleep.base.millis=1", "-D", "dfs.client.failover.sleep.max.millis=5"}
	for i, a := range addrs {
		args = append(args, "-D", "dfs.namenode.rpc-address.ns1.nn"+string(rune('1'+i))+"="+a)
	}
	return args
}

// The tools that find the NameNode from fs.defaultFS resolve an
// hdfs://<nameservice> and reach its active NameNode.
func TestToolsResolveNameservice(t *testing.T) {
	standby, _ := startFakeNN(t, true)
	active, served := startFakeNN(t, false)
	for _, tc := range []struct {
		args []string
		out  string
	}{
		{[]string{"dfsadmin", "-safemode", "get"}, "Safe mode is OFF\n"},
		{[]string{"dfs", "-test", "-d", "/"}, ""},
		{[]string{"getconf", "-namenodes"}, "127.0.0.1 127.0.0.1\n"},
	} {
		var out, errb bytes.Buffer
		before := served()
		if code := Main(append(haArgs(standby, active), tc.args...), nil, &out, &errb); code != 0 || out.String() != tc.out {
			t.Errorf("%v: exit %d, out %q, err %q; want 0, %q", tc.args, code, out.String(), errb.String(), tc.out)
		}
		if tc.args[0] != "getconf" && served() != before+1 {
			t.Errorf("%v: the active NameNode served %d calls, want 1", tc.args, served()-before)
		}
	}
}

func TestNameNodeOptions(t *testing.T) {
	var out, errb bytes.Buffer
	var opts hdfs.Options
	register(command{name: "test-nnopts", run: func(ctx context.Context, env *Env, args []string) int {
		var err error
		if opts, err = nameNodeOptions(env); err != nil {
			t.Error(err)
			return 1
		}
		return 0
	}})
	if code := Main(append(haArgs("a:1", "b:2"), "test-nnopts"), nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if strings.Join(opts.Addrs, ",") != "a:1,b:2" || opts.Authority != "ns1" {
		t.Fatalf("options %+v, want both NameNodes of ns1", opts)
	}
}
