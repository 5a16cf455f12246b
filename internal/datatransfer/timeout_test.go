package datatransfer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// shortExtension shortens the per-node timeout extension for one test.
func shortExtension(t *testing.T, d time.Duration) {
	old := timeoutExtension
	timeoutExtension = d
	t.Cleanup(func() { timeoutExtension = old })
}

// A first DataNode that takes packets and never acknowledges them fails
// the pipeline at node 0 once SocketTimeout (plus the extension per node)
// passes without an ack, although the context has no deadline; a write
// blocked on the silent node is interrupted too.
func TestWriterAckTimeout(t *testing.T) {
	shortExtension(t, 50*time.Millisecond)
	dn := newFakeDN(t)
	dn.noAcks = true
	dn.start()
	w, err := NewBlockWriter(context.Background(), dn.dial(t), WriteBlockConfig{
		ClientName: "c", Block: testBlock(1, 0), SocketTimeout: 200 * time.Millisecond,
		HeartbeatInterval: -1, // the fake DataNode would ack heartbeats out of turn
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	t0 := time.Now()
	w.Write([]byte("data"))
	done := make(chan error, 1)
	go func() { done <- w.Flush(false) }()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Flush did not return: no ack timeout")
	}
	var pe *PipelineError
	if !errors.As(err, &pe) || pe.BadIndex != 0 || !errors.Is(err, os.ErrDeadlineExceeded) ||
		!strings.Contains(err.Error(), "250 millis timeout while waiting for channel to be ready for read") {
		t.Fatalf("Flush: %v, want a read timeout at node 0", err)
	}
	if el := time.Since(t0); el < 250*time.Millisecond {
		t.Errorf("failed after %v, before the timeout", el)
	}
	if off, rest := w.Unacked(); off != 0 || string(rest) != "data" {
		t.Errorf("Unacked = %d %q", off, rest)
	}
}

// Heartbeats keep an idle writer within a short socket timeout: with
// SocketTimeout set and no HeartbeatInterval, the writer sends one every
// half timeout, each acknowledged, so a long pause is not a failure.
func TestWriterIdleWithinTimeout(t *testing.T) {
	shortExtension(t, 100*time.Millisecond)
	dn := newFakeDN(t)
	dn.start()
	w, err := NewBlockWriter(context.Background(), dn.dial(t), WriteBlockConfig{
		ClientName: "c", Block: testBlock(1, 0), SocketTimeout: 600 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("before"))
	if err := w.Flush(false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	w.Write([]byte(" after"))
	if err := w.Close(); err != nil {
		t.Fatalf("Close after an idle spell: %v", err)
	}
	dn.mu.Lock()
	hb := dn.heartbeats
	dn.mu.Unlock()
	if hb == 0 {
		t.Error("no heartbeats while idle")
	}
	if got := string(dn.block(1)); got != "before after" {
		t.Fatalf("block %q", got)
	}
}

// Close sends the last packet only once every data packet is
// acknowledged (Hadoop's waitForAllAcks before PIPELINE_CLOSE): a
// DataNode that holds back the data acks sees nothing more until it
// sends them.
func TestCloseWaitsForDataAcks(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv := make(chan error, 1)
	go func() {
		srv <- func() error {
			c, err := ln.Accept()
			if err != nil {
				return err
			}
			defer c.Close()
			r := bufio.NewReader(c)
			if _, _, err := ReadRequest(r); err != nil {
				return err
			}
			if err := WriteResponse(c, &hdfspb.BlockOpResponseProto{Status: hdfspb.Status_SUCCESS.Enum(), FirstBadLink: proto.String("")}); err != nil {
				return err
			}
			pr := NewPacketReader(r, 0)
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			p, err := pr.Next()
			if err != nil || p.LastPacketInBlock || len(p.Data) == 0 {
				return errors.New("first packet: not a data packet")
			}
			seq := p.Seqno
			// Hold the ack: the last packet must not come meanwhile.
			c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			if q, err := pr.Next(); err == nil {
				return fmt.Errorf("packet %d (last %v) arrived before the data packet was acknowledged", q.Seqno, q.LastPacketInBlock)
			}
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if err := WriteAck(c, &Ack{Seqno: seq, Replies: []hdfspb.Status{hdfspb.Status_SUCCESS}}); err != nil {
				return err
			}
			q, err := pr.Next()
			if err != nil || !q.LastPacketInBlock {
				return errors.New("no last packet after the ack")
			}
			return WriteAck(c, &Ack{Seqno: q.Seqno, Replies: []hdfspb.Status{hdfspb.Status_SUCCESS}})
		}()
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewBlockWriter(context.Background(), conn, WriteBlockConfig{ClientName: "c", Block: testBlock(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("data"))
	cerr := w.Close()
	if err := <-srv; err != nil {
		t.Fatal(err)
	}
	if cerr != nil {
		t.Fatalf("Close: %v", cerr)
	}
}

// CloseRecovery sends PIPELINE_CLOSE_RECOVERY with the new generation
// stamp and the acknowledged length and sends no packets; a refusal names
// the bad node from firstBadLink.
func TestCloseRecovery(t *testing.T) {
	dn := newFakeDN(t)
	dn.start()
	next := testTarget("127.0.0.9", 50010)
	cfg := WriteBlockConfig{ClientName: "c", Block: testBlock(7, 1000), Targets: []*hdfspb.DatanodeInfoProto{next},
		LatestGenerationStamp: 1002, MinBytesRcvd: 1000, MaxBytesRcvd: 1000,
		Stage: hdfspb.OpWriteBlockProto_PIPELINE_SETUP_STREAMING_RECOVERY.Enum()}
	if err := CloseRecovery(context.Background(), dn.dial(t), cfg); err != nil {
		t.Fatal(err)
	}
	dn.mu.Lock()
	got := dn.closeRecoveries
	dn.mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("%d close recoveries received", len(got))
	}
	op := got[0]
	if op.GetStage() != hdfspb.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY || op.GetLatestGenerationStamp() != 1002 ||
		op.GetMinBytesRcvd() != 1000 || op.GetPipelineSize() != 2 || len(op.GetTargets()) != 1 {
		t.Errorf("op %v", op)
	}

	bad := newFakeDN(t)
	bad.connectStatus = hdfspb.Status_ERROR
	bad.connectBadLink = "127.0.0.9:50010"
	bad.start()
	err := CloseRecovery(context.Background(), bad.dial(t), cfg)
	var pe *PipelineError
	if !errors.As(err, &pe) || pe.BadIndex != 1 {
		t.Fatalf("refused close recovery: %v, want a failure at node 1", err)
	}
}
