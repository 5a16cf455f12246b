package datatransfer

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// deadlineConn records the bytes written under each write deadline.
type deadlineConn struct {
	net.Conn
	mu      sync.Mutex
	cur     int
	largest int
}

func (c *deadlineConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.cur = 0
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}

func (c *deadlineConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.cur += len(p)
	c.largest = max(c.largest, c.cur)
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// TestWriteBatchBoundedByBytes writes 4 MiB with one Write: the packets
// go out in batches, each under its own write deadline, of at most
// maxBatchBytes plus the packet that crossed it.
func TestWriteBatchBoundedByBytes(t *testing.T) {
	dn := newFakeDN(t).start()
	data := randomData(4<<20, 5)
	c := &deadlineConn{Conn: dn.dial(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := NewBlockWriter(ctx, c, WriteBlockConfig{ClientName: "DFSClient_test", Block: testBlock(9, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dn.block(9), data) {
		t.Fatal("DataNode holds other bytes")
	}
	c.mu.Lock()
	largest := c.largest
	c.mu.Unlock()
	packet := PacketDataSize + 1024 // data, checksums, header, lengths
	if largest > maxBatchBytes+packet {
		t.Fatalf("%d bytes written under one write deadline, want at most %d", largest, maxBatchBytes+packet)
	}
	if largest < 2*PacketDataSize {
		t.Fatalf("at most %d bytes under one write deadline: the packets were not batched", largest)
	}
}
