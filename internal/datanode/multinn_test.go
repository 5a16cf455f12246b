package datanode_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/storage"
)

// fakeNN is a NameNode as a DataNode sees it: it answers registrations,
// heartbeats (with its HA state and the commands a test queued) and
// reports, and records them.
type fakeNN struct {
	srv  *ipc.Server
	addr string

	mu            sync.Mutex
	state         dnpb.NNHAStatus_State
	txid          uint64
	registrations int
	heartbeats    int
	received      []uint64 // block ids of incremental reports
	commands      []*dnpb.Command
}

func startFakeNN(t *testing.T, state dnpb.NNHAStatus_State, txid uint64) *fakeNN {
	t.Helper()
	f := &fakeNN{state: state, txid: txid}
	f.srv = ipc.NewServer(ipc.ServerConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	f.srv.Register(datanode.DatanodeProtocolName, map[string]ipc.Method{
		"register": ipc.Unary(func(ctx context.Context, req *dnpb.RegisterRequest) (*dnpb.RegisterResponse, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.registrations++
			return &dnpb.RegisterResponse{ClusterId: proto.String("CID-test"), BlockPoolId: proto.String("BP-test"), NamespaceId: proto.Uint32(1)}, nil
		}),
		"heartbeat": ipc.Unary(func(ctx context.Context, req *dnpb.HeartbeatRequest) (*dnpb.HeartbeatResponse, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.heartbeats++
			cmds := f.commands
			f.commands = nil
			return &dnpb.HeartbeatResponse{Commands: cmds, HaStatus: &dnpb.NNHAStatus{State: f.state.Enum(), Txid: proto.Uint64(f.txid)}}, nil
		}),
		"blockReport": ipc.Unary(func(ctx context.Context, req *dnpb.BlockReportRequest) (*dnpb.BlockReportResponse, error) {
			return &dnpb.BlockReportResponse{}, nil
		}),
		"blockReceivedAndDeleted": ipc.Unary(func(ctx context.Context, req *dnpb.ReceivedDeletedRequest) (*dnpb.ReceivedDeletedResponse, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			for _, s := range req.GetStorages() {
				for _, r := range s.GetReceived() {
					f.received = append(f.received, r.GetBlockId())
				}
			}
			return &dnpb.ReceivedDeletedResponse{}, nil
		}),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	go f.srv.Serve(ln)
	t.Cleanup(func() { f.srv.Close() })
	return f
}

func (f *fakeNN) set(state dnpb.NNHAStatus_State, txid uint64) {
	f.mu.Lock()
	f.state, f.txid = state, txid
	f.mu.Unlock()
}

func (f *fakeNN) counts() (registrations, heartbeats int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.registrations, f.heartbeats
}

func (f *fakeNN) hasReceived(id uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Contains(f.received, id)
}

// invalidate queues an InvalidateCommand for the next heartbeat and
// returns once a heartbeat after the one that carried it was answered:
// the DataNode has handled the command by then.
func (f *fakeNN) invalidate(t *testing.T, b fsdataset.ReplicaInfo) {
	t.Helper()
	f.mu.Lock()
	f.commands = append(f.commands, &dnpb.Command{Command: &dnpb.Command_Invalidate{Invalidate: &dnpb.InvalidateCommand{
		Blocks: []*dnpb.Replica{{BlockId: proto.Uint64(b.ID), GenStamp: proto.Uint64(b.GenStamp)}}}}})
	f.mu.Unlock()
	f.waitHeartbeats(t, 2)
}

// waitHeartbeats waits for n more heartbeats.
func (f *fakeNN) waitHeartbeats(t *testing.T, n int) {
	t.Helper()
	_, start := f.counts()
	waitFor(t, "heartbeats", func() bool { _, hb := f.counts(); return hb >= start+n })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func startDataNode(t *testing.T, nns ...string) *datanode.DataNode {
	t.Helper()
	dn, err := datanode.New(datanode.Config{
		Volumes:       []fsdataset.VolumeConfig{{Path: filepath.Join(t.TempDir(), "v"), Type: storage.Disk}},
		NameNodeAddrs: nns, XferAddr: "127.0.0.1:0", HeartbeatInterval: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := dn.Start(); err != nil {
		dn.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { dn.Close() })
	return dn
}

func writeReplica(t *testing.T, dn *datanode.DataNode, id uint64) fsdataset.ReplicaInfo {
	t.Helper()
	w, err := dn.Dataset().CreateRBW(fsdataset.Block{ID: id, GenStamp: 1001}, storage.Disk, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("replica data")); err != nil {
		t.Fatal(err)
	}
	info, err := w.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func present(dn *datanode.DataNode, b fsdataset.ReplicaInfo) bool {
	_, ok := dn.Dataset().Get(b.ID)
	return ok
}

// TestCommandsOnlyFromActiveNameNode: a DataNode of a two-NameNode
// nameservice registers with, heartbeats and reports to both, runs the
// active one's commands and drops the standby's; after a failover it
// follows the new active, and a NameNode claiming active with a txid
// older than the last accepted claim is not obeyed.
func TestCommandsOnlyFromActiveNameNode(t *testing.T) {
	nn1 := startFakeNN(t, dnpb.NNHAStatus_ACTIVE, 10)
	nn2 := startFakeNN(t, dnpb.NNHAStatus_STANDBY, 9)
	dn := startDataNode(t, nn1.addr, nn2.addr)
	for _, nn := range []*fakeNN{nn1, nn2} {
		waitFor(t, "registration and heartbeats", func() bool { r, hb := nn.counts(); return r == 1 && hb >= 2 })
	}
	b1, b2, b3 := writeReplica(t, dn, 1<<30+1), writeReplica(t, dn, 1<<30+2), writeReplica(t, dn, 1<<30+3)
	for _, b := range []fsdataset.ReplicaInfo{b1, b2, b3} {
		for _, nn := range []*fakeNN{nn1, nn2} {
			waitFor(t, "incremental reports to both NameNodes", func() bool { return nn.hasReceived(b.ID) })
		}
	}

	nn2.invalidate(t, b1)
	if !present(dn, b1) {
		t.Fatal("the DataNode ran a standby NameNode's command")
	}
	nn1.invalidate(t, b2)
	if present(dn, b2) {
		t.Fatal("the DataNode did not run the active NameNode's command")
	}

	// Failover: nn2 takes over at a higher txid.
	nn1.set(dnpb.NNHAStatus_STANDBY, 10)
	nn2.set(dnpb.NNHAStatus_ACTIVE, 11)
	nn1.waitHeartbeats(t, 2)
	nn2.waitHeartbeats(t, 2)
	nn1.invalidate(t, b1)
	if !present(dn, b1) {
		t.Fatal("the DataNode ran a command of the NameNode that turned standby")
	}
	nn2.invalidate(t, b1)
	if present(dn, b1) {
		t.Fatal("the DataNode did not run the new active NameNode's command")
	}

	// nn1 claims active again, but with a txid older than nn2's claim: a
	// stale active.
	nn1.set(dnpb.NNHAStatus_ACTIVE, 10)
	nn1.waitHeartbeats(t, 2)
	nn1.invalidate(t, b3)
	if !present(dn, b3) {
		t.Fatal("the DataNode ran a command of a NameNode claiming active with a stale txid")
	}
	if r1, _ := nn1.counts(); r1 != 1 {
		t.Fatalf("nn1 saw %d registrations, want 1", r1)
	}
}

// TestNameNodeDownDelaysNoOther: with one NameNode of the pair accepting
// connections but never answering, the DataNode still registers with the
// other, heartbeats to it, reports new replicas to it at once and runs
// its commands.
func TestNameNodeDownDelaysNoOther(t *testing.T) {
	hung, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hung.Close() })
	var conns []net.Conn
	var connsMu sync.Mutex
	go func() {
		for {
			c, err := hung.Accept()
			if err != nil {
				return
			}
			connsMu.Lock()
			conns = append(conns, c) // read nothing, answer nothing
			connsMu.Unlock()
		}
	}()
	// Closed after the DataNode (cleanups run last first): its Close must
	// not wait for the silent NameNode.
	t.Cleanup(func() {
		connsMu.Lock()
		for _, c := range conns {
			c.Close()
		}
		connsMu.Unlock()
	})
	nn2 := startFakeNN(t, dnpb.NNHAStatus_ACTIVE, 5)
	dn := startDataNode(t, hung.Addr().String(), nn2.addr)
	waitFor(t, "registration", func() bool { r, _ := nn2.counts(); return r == 1 })
	nn2.waitHeartbeats(t, 5)
	// waitFor's 15 s are well below the 60 s a call to the silent
	// NameNode may take: none of this waits for it.
	b := writeReplica(t, dn, 1<<30+7)
	waitFor(t, "the incremental report", func() bool { return nn2.hasReceived(b.ID) })
	nn2.invalidate(t, b)
	if present(dn, b) {
		t.Fatal("the DataNode did not run the reachable active NameNode's command")
	}
}
