package balancer

import (
	"bufio"
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"google.golang.org/protobuf/proto"
)

// fakeTarget answers one REPLACE_BLOCK: IN_PROGRESS every tick for busy,
// then status (none: it stays silent).
func fakeTarget(t *testing.T, tick, busy time.Duration, status *hdfspb.Status) *Node {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, _, err := datatransfer.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		for end := time.Now().Add(busy); time.Now().Before(end); {
			time.Sleep(tick)
			if status != nil {
				datatransfer.WriteResponse(c, &hdfspb.BlockOpResponseProto{Status: hdfspb.Status_IN_PROGRESS.Enum()})
			}
		}
		if status != nil {
			datatransfer.WriteResponse(c, &hdfspb.BlockOpResponseProto{Status: status.Enum()})
		}
		time.Sleep(busy)
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	return &Node{UUID: "target", IP: "127.0.0.1", XferPort: uint32(p)}
}

// TestMoveWaitsWhileInProgress: a move outlasting the idle timeout
// succeeds while the target keeps saying IN_PROGRESS; a silent target
// fails it after the idle timeout.
func TestMoveWaitsWhileInProgress(t *testing.T) {
	proxy := &Node{UUID: "proxy", IP: "127.0.0.1", XferPort: 1}
	c := &RPCCluster{IdleTimeout: 300 * time.Millisecond, nodes: map[string]*hdfspb.DatanodeInfoProto{"proxy": {Id: &hdfspb.DatanodeIDProto{
		IpAddr: proto.String("127.0.0.1"), HostName: proto.String("p"), DatanodeUuid: proto.String("proxy"),
		XferPort: proto.Uint32(1), InfoPort: proto.Uint32(1), IpcPort: proto.Uint32(1)}}}}
	move := func(target *Node) error {
		return c.Move(context.Background(), Move{Block: Block{ID: 1, GenStamp: 1, NumBytes: 1}, Source: proxy, Proxy: proxy, Target: target})
	}
	if err := move(fakeTarget(t, 50*time.Millisecond, time.Second, hdfspb.Status_SUCCESS.Enum())); err != nil {
		t.Fatalf("a move in progress for 1 s with a 300 ms idle timeout: %v", err)
	}
	start := time.Now()
	if err := move(fakeTarget(t, 50*time.Millisecond, 2*time.Second, nil)); err == nil {
		t.Fatal("a silent target's move succeeded")
	}
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Fatalf("silent target failed the move after %v, want about the idle timeout", d)
	}
}

// A protection value that does not parse fails the move's dial instead of
// dialing without the handshake; valid ones select the SASL dialer.
func TestDialerProtection(t *testing.T) {
	if d, err := (&RPCCluster{DataTransferProtection: "privcy"}).dialer(); err == nil {
		t.Fatalf("bad protection gave dialer %+v", d)
	}
	d, err := (&RPCCluster{DataTransferProtection: "integrity"}).dialer()
	if err != nil || !d.SASL.Enabled() {
		t.Fatalf("integrity: %+v, %v", d, err)
	}
	if d, err := (&RPCCluster{}).dialer(); err != nil || d.SASL.Enabled() {
		t.Fatalf("no protection: %+v, %v", d, err)
	}
}
