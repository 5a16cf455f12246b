package hdfs

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// defaultsNN answers getServerDefaults, or fails it while down.
type defaultsNN struct {
	calls   atomic.Int32
	down    atomic.Bool
	encrypt bool
}

func (n *defaultsNN) Call(_ context.Context, method string, _, resp proto.Message) error {
	if method != "getServerDefaults" {
		return errors.New("unexpected call " + method)
	}
	n.calls.Add(1)
	if n.down.Load() {
		return errors.New("connection refused")
	}
	resp.(*hdfspb.GetServerDefaultsResponseProto).ServerDefaults = &hdfspb.FsServerDefaultsProto{
		BlockSize: proto.Uint64(128 << 20), EncryptDataTransfer: proto.Bool(n.encrypt)}
	return nil
}
func (n *defaultsNN) Close() error { return nil }

// A client with no protection of its own fails the dial when the server
// defaults (which may say "encrypt") cannot be had, rather than sending
// its op and token in cleartext; the answer is cached for the validity
// period and a failure is retried only after a backoff.
func TestDialNeedsServerDefaults(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	dn := &hdfspb.DatanodeInfoProto{Id: &hdfspb.DatanodeIDProto{IpAddr: proto.String("127.0.0.1"), XferPort: proto.Uint32(uint32(port))}}

	nn := &defaultsNN{}
	nn.down.Store(true)
	now := time.Unix(1e9, 0)
	c := &Client{nn: nn, dialer: &datatransfer.Dialer{}, now: func() time.Time { return now }}
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if conn, err := c.dial(ctx, dn, nil); err == nil {
			conn.Close()
			t.Fatal("dial without server defaults succeeded")
		}
	}
	if n := nn.calls.Load(); n != 1 {
		t.Errorf("%d getServerDefaults calls within the backoff, want 1", n)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the DataNode was connected to %d times without the handshake", n)
	}

	nn.down.Store(false)
	now = now.Add(1500 * time.Millisecond) // past the first backoff (1 s)
	for i := 0; i < 5; i++ {
		conn, err := c.dial(ctx, dn, nil)
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
	}
	if n := nn.calls.Load(); n != 2 {
		t.Errorf("%d getServerDefaults calls, want 2: the answer is cached", n)
	}
	now = now.Add(59 * time.Minute)
	c.serverDefaults(ctx)
	if n := nn.calls.Load(); n != 2 {
		t.Errorf("asked again within the validity period (%d calls)", n)
	}
	now = now.Add(2 * time.Minute)
	c.serverDefaults(ctx)
	if n := nn.calls.Load(); n != 3 {
		t.Errorf("not asked again after the validity period (%d calls)", n)
	}
}

// Server defaults that say encrypt switch the client to the key dialer.
func TestServerDefaultsEncrypt(t *testing.T) {
	nn := &defaultsNN{encrypt: true}
	c := &Client{nn: nn, dialer: &datatransfer.Dialer{}}
	d, err := c.currentDialer(context.Background())
	if err != nil || !d.SASL.Enabled() || d.SASL.EncryptionKey == nil {
		t.Fatalf("dialer %+v, %v", d, err)
	}
	if d2, _ := c.currentDialer(context.Background()); d2 != d || nn.calls.Load() != 1 {
		t.Errorf("dialer rebuilt or defaults asked again (%d calls)", nn.calls.Load())
	}
}
