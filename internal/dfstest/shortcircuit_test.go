package dfstest

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/testcluster"
)

// TestShortCircuitReads: with dfs.domain.socket.path set on DataNodes and
// client, reads of local replicas take the files over the Unix socket and
// no block data crosses TCP; a corrupt local replica is caught by the
// client's own checksum check and the read continues from another copy.
func TestShortCircuitReads(t *testing.T) {
	sockDir, err := os.MkdirTemp("", "sc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	pattern := filepath.Join(sockDir, "dn_PORT.sock")
	c := testcluster.New(t, testcluster.Config{DataNodes: 3, DataNode: func(i int, dc *datanode.Config) {
		dc.DomainSocketPath = pattern
	}})
	writer := c.Client(c.Superuser())
	data := randBytes(2*smallBlock+333, 21)
	writeFile(t, writer, "/sc", data, 3)

	cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: c.Superuser(), ShortCircuitSocket: pattern})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	read := func() []byte {
		f, err := cl.OpenFile(ctx, "/sc")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tcpBefore, scBefore := dnStats(c)
	if got := read(); !bytes.Equal(got, data) {
		t.Fatal("short-circuit read returned wrong data")
	}
	f, _ := cl.OpenFile(ctx, "/sc")
	buf := make([]byte, 1000)
	if n, err := f.ReadAt(buf, smallBlock-500); err != nil || !bytes.Equal(buf[:n], data[smallBlock-500:smallBlock+500]) {
		t.Fatalf("short-circuit ReadAt across a block boundary: %d %v", n, err)
	}
	f.Close()
	tcpAfter, scAfter := dnStats(c)
	if scAfter-scBefore < 3 || tcpAfter != tcpBefore {
		t.Fatalf("short-circuit requests %d, TCP block bytes sent %d: want ≥3 and 0", scAfter-scBefore, tcpAfter-tcpBefore)
	}

	// Corrupt the first block on every replica holder but one.
	locs, _ := cl.BlockLocations(ctx, "/sc")
	for _, uuid := range locs[0].DatanodeIDs[:2] {
		c.CorruptReplica(c.DataNodeIndex(uuid), locs[0].BlockID, 4096)
	}
	for i := 0; i < 3; i++ {
		if got := read(); !bytes.Equal(got, data) {
			t.Fatal("read with corrupt local replicas returned wrong data")
		}
	}
}

func dnStats(c *testcluster.Cluster) (tcpBytes, shortCircuit int64) {
	for i := 0; i < c.NumDataNodes(); i++ {
		if d := c.DataNode(i); d != nil {
			st := d.Status()
			tcpBytes += st.Read
			shortCircuit += st.ShortCircuit
		}
	}
	return
}

// TestInProcessLocalReads: a client made with Options.LocalReplicas (as a
// DataNode's WebHDFS makes it) reads that DataNode's replicas from their
// files in-process — no block bytes over TCP from it — and a corrupt one
// is caught by the CRC check, the read going on from the other copy.
func TestInProcessLocalReads(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 2})
	data := randBytes(2*smallBlock+777, 22)
	writeFile(t, c.Client(c.Superuser()), "/ip", data, 2)
	dn := c.DataNode(0)
	cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: c.Superuser(), LocalReplicas: dn})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	before := dn.Status()
	for i := 0; i < 5; i++ {
		if got := readFile(t, cl, "/ip"); !bytes.Equal(got, data) {
			t.Fatal("in-process read returned wrong data")
		}
	}
	after := dn.Status()
	if after.ShortCircuit-before.ShortCircuit < 15 || after.Read != before.Read {
		t.Fatalf("in-process opens %d, TCP bytes sent by the local DataNode %d: want 15 (3 blocks × 5 reads) and 0",
			after.ShortCircuit-before.ShortCircuit, after.Read-before.Read)
	}
	locs, _ := cl.BlockLocations(context.Background(), "/ip")
	for _, l := range locs {
		c.CorruptReplica(0, l.BlockID, 100)
	}
	if got := readFile(t, cl, "/ip"); !bytes.Equal(got, data) {
		t.Fatal("read with a corrupt local replica returned wrong data")
	}
}

// TestAbandonedReaderIsClosed: a FileReader dropped mid-file without
// Close does not keep its read-ahead goroutine (and its DataNode
// connection) forever: a cleanup closes it once the reader is collected.
func TestAbandonedReaderIsClosed(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 1})
	data := randBytes(3*smallBlock, 23)
	writeFile(t, c.Client(c.Superuser()), "/ab", data, 1)
	cl := c.Client(c.Superuser())
	prefetching := func() int {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		return strings.Count(string(buf[:n]), "hdfs.(*prefetcher).run")
	}
	base := prefetching()
	func() {
		for i := 0; i < 4; i++ {
			f, err := cl.OpenFile(context.Background(), "/ab")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(f, make([]byte, 1000)); err != nil {
				t.Fatal(err)
			}
			// dropped without Close
		}
	}()
	if prefetching() <= base {
		t.Fatal("no read-ahead goroutine ran: the test checks nothing")
	}
	for i := 0; i < 100 && prefetching() > base; i++ {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	if n := prefetching(); n > base {
		t.Fatalf("%d read-ahead goroutines of dropped readers still run", n-base)
	}
}

// TestShortCircuitFdsAsHadoopFramesThem: the DataNode answers
// REQUEST_SHORT_CIRCUIT_FDS as Hadoop's does — the response, then the two
// descriptors in a one-byte message of their own (0, or 1 when the client
// offered receipt verification, after which the DataNode waits for the
// client's byte before it counts the read) — so a reader that reads the
// response as a stream, as Hadoop's client does, gets the descriptors
// from the next message.
func TestShortCircuitFdsAsHadoopFramesThem(t *testing.T) {
	sockDir := t.TempDir()
	pattern := filepath.Join(sockDir, "dn_PORT.sock")
	c := testcluster.New(t, testcluster.Config{DataNodes: 1, DataNode: func(i int, dc *datanode.Config) {
		dc.DomainSocketPath = pattern
	}})
	cl := c.Client(c.Superuser())
	data := randBytes(1000, 7)
	writeFile(t, cl, "/h", data, 1)
	ctx := context.Background()
	resp := &hdfspb.GetBlockLocationsResponseProto{}
	if err := cl.Call(ctx, "getBlockLocations", &hdfspb.GetBlockLocationsRequestProto{Src: proto.String("/h"), Offset: proto.Uint64(0), Length: proto.Uint64(1000)}, resp); err != nil {
		t.Fatal(err)
	}
	lb := resp.GetLocations().GetBlocks()[0]
	sock := datanode.DomainSocketPath(pattern, c.DataNode(0).XferAddr())
	for i, verify := range []bool{false, true} {
		conn, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		uc := conn.(*net.UnixConn)
		uc.SetDeadline(time.Now().Add(10 * time.Second))
		op := &hdfspb.OpRequestShortCircuitAccessProto{Header: &hdfspb.BaseHeaderProto{Block: lb.GetB(), Token: lb.GetBlockToken()},
			MaxVersion: proto.Uint32(1), SupportsReceiptVerification: proto.Bool(verify)}
		if err := datatransfer.WriteRequest(uc, datatransfer.OpRequestShortCircuitFds, op); err != nil {
			t.Fatal(err)
		}
		// The response as a stream, as Hadoop's client reads it: its
		// length a byte at a time, then exactly its bytes; no descriptors
		// come with them.
		n, err := binary.ReadUvarint(byteReader{uc})
		if err != nil {
			t.Fatal(err)
		}
		msg := make([]byte, n)
		if _, err := io.ReadFull(uc, msg); err != nil {
			t.Fatal(err)
		}
		var r hdfspb.BlockOpResponseProto
		if err := proto.Unmarshal(msg, &r); err != nil || r.GetStatus() != hdfspb.Status_SUCCESS {
			t.Fatalf("response %v, %v", &r, err)
		}
		flag := make([]byte, 1)
		oob := make([]byte, syscall.CmsgSpace(2*4))
		fn, oobn, _, _, err := uc.ReadMsgUnix(flag, oob)
		if err != nil || fn != 1 {
			t.Fatalf("the descriptors' message: %d bytes, %v", fn, err)
		}
		if want := map[bool]byte{false: 0, true: 1}[verify]; flag[0] != want {
			t.Fatalf("flag byte %d, want %d", flag[0], want)
		}
		msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			t.Fatalf("control messages %v, %v", msgs, err)
		}
		fds, err := syscall.ParseUnixRights(&msgs[0])
		if err != nil || len(fds) != 2 {
			t.Fatalf("descriptors %v, %v", fds, err)
		}
		f := os.NewFile(uintptr(fds[0]), "data")
		got, err := io.ReadAll(f)
		f.Close()
		syscall.Close(fds[1])
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("the data file: %d bytes, %v", len(got), err)
		}
		if verify {
			time.Sleep(50 * time.Millisecond)
			if n := c.DataNode(0).Status().ShortCircuit; n != int64(i) {
				t.Fatalf("counted %d reads before the receipt, want %d", n, i)
			}
			uc.Write([]byte{0})
		}
		for deadline := time.Now().Add(5 * time.Second); c.DataNode(0).Status().ShortCircuit != int64(i+1); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d short-circuit reads counted, want %d", c.DataNode(0).Status().ShortCircuit, i+1)
			}
		}
		conn.Close()
	}
}

// byteReader reads one byte per read from r, never further.
type byteReader struct{ r io.Reader }

func (b byteReader) ReadByte() (byte, error) {
	var p [1]byte
	_, err := io.ReadFull(b.r, p[:])
	return p[0], err
}
