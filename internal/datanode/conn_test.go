package datanode

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/datatransfer"
)

// countingFile is a FileSource that counts ReadAt calls: SendBlock's
// zero-copy path (ReadFrom of the file, sendfile(2) on TCP) never makes one.
type countingFile struct {
	f      *os.File
	readAt atomic.Int64
}

func (c *countingFile) ReadAt(p []byte, off int64) (int, error) {
	c.readAt.Add(1)
	return c.f.ReadAt(p, off)
}
func (c *countingFile) ReadChecksumsAt(p []byte, first int64) error { clear(p); return nil }
func (c *countingFile) DataFile() (*os.File, int64)                 { return c.f, 0 }

func socketPair(t *testing.T, network string) (server, client net.Conn) {
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// Unprotected TCP and Unix socket connections send block data on the
// ReadFrom (zero-copy) path; only a connection marked as carrying a
// security layer falls back to ReadAt and whole-packet writes.
func TestPeerConnZeroCopyPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "blk")
	if err := os.WriteFile(path, make([]byte, 300<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		network  string
		layered  bool
		wantCopy bool
	}{{"tcp", false, true}, {"unix", false, true}, {"tcp", true, false}} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		src := &countingFile{f: f}
		server, client := socketPair(t, tc.network)
		pc := newPeerConn(server, 5*time.Second, 5*time.Second)
		pc.layered = tc.layered
		go io.Copy(io.Discard, client)
		if err := datatransfer.SendBlock(pc, src, 0, 300<<10, false); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if zeroCopy := src.readAt.Load() == 0; zeroCopy != tc.wantCopy {
			t.Errorf("%s layered=%v: ReadAt used %d times", tc.network, tc.layered, src.readAt.Load())
		}
	}
}
