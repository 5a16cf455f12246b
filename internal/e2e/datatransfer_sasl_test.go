package e2e

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/digestmd5"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/testcluster"
)

// Data transfer protection (dfs.data.transfer.protection, SASL with block
// tokens): colinmarc/hdfs and the strata binary write and read a
// multi-block file with replication 2 (so the DataNode pipeline is
// protected too) at each protection level; clients without the
// handshake, with forged or expired tokens, and a tampered integrity
// stream are refused.

const saslBlock = 1 << 20

func saslCluster(t *testing.T, extra map[string]string) *testcluster.Cluster {
	t.Helper()
	cf := map[string]string{"dfs.block.access.token.enable": "true", "dfs.blocksize": "1m"}
	for k, v := range extra {
		cf[k] = v
	}
	return testcluster.New(t, testcluster.Config{DataNodes: 2, Conf: cf})
}

func saslData(n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestDataTransferProtection(t *testing.T) {
	bin := testcluster.Binary(t)
	for _, tc := range []struct {
		name, protection string
		conf             map[string]string
	}{
		{"authentication", "authentication", nil},
		{"integrity", "integrity", nil},
		{"privacy-rc4", "privacy", nil},
		{"privacy-aes", "privacy", map[string]string{"dfs.encrypt.data.transfer.cipher.suites": datatransfer.AESCTRNoPadding}},
		{"encrypt", "privacy", map[string]string{"dfs.encrypt.data.transfer": "true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cf := map[string]string{"dfs.data.transfer.protection": tc.protection}
			for k, v := range tc.conf {
				cf[k] = v
			}
			c := saslCluster(t, cf)
			data := saslData(2*saslBlock + 12345) // three blocks

			// colinmarc/hdfs.
			gc, err := gohdfs.NewClient(gohdfs.ClientOptions{Addresses: []string{c.Addr()}, User: c.Superuser(), DataTransferProtection: tc.protection})
			if err != nil {
				t.Fatal(err)
			}
			defer gc.Close()
			w, err := gc.CreateFile("/go", 2, saslBlock, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(data); err != nil {
				t.Fatalf("colinmarc write: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("colinmarc close: %v", err)
			}
			got, err := gc.ReadFile("/go")
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("colinmarc read back %d bytes of %d: %v", len(got), len(data), err)
			}
			c.WaitReplicated("/go", 2, 30*time.Second)

			// The strata binary, writing and reading the other's file.
			dir := t.TempDir()
			local := filepath.Join(dir, "in")
			os.WriteFile(local, data, 0o644)
			args := []string{"-fs", "hdfs://" + c.Addr(), "-D", "dfs.data.transfer.protection=" + tc.protection,
				"-D", "dfs.replication=2", "-D", "dfs.blocksize=1m"}
			for k, v := range tc.conf {
				args = append(args, "-D", k+"="+v)
			}
			cli := func(a ...string) ([]byte, error) {
				cmd := exec.Command(bin, append(append([]string{}, args...), a...)...)
				cmd.Env = append(os.Environ(), "HADOOP_USER_NAME="+c.Superuser(), "STRATA_CONF_DIR="+dir, "HADOOP_CONF_DIR=")
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Logf("strata %v: %s", a, stderr.Bytes())
				}
				return out, err
			}
			if _, err := cli("dfs", "-put", local, "/cli"); err != nil {
				t.Fatalf("strata -put: %v", err)
			}
			for _, p := range []string{"/cli", "/go"} {
				out, err := cli("dfs", "-cat", p)
				if err != nil || !bytes.Equal(out, data) {
					t.Fatalf("strata -cat %s: %d bytes, %v", p, len(out), err)
				}
			}
			got, err = gc.ReadFile("/cli")
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("colinmarc reading strata's file: %d bytes, %v", len(got), err)
			}
			c.WaitReplicated("/cli", 2, 30*time.Second)

			if tc.conf["dfs.encrypt.data.transfer"] == "true" {
				// Clients learn encryption from the NameNode's server
				// defaults, configured or not (Hadoop's too).
				plain := c.Client(c.Superuser())
				f, err := plain.OpenFile(context.Background(), "/cli")
				if err == nil {
					got, err = io.ReadAll(f)
					f.Close()
				}
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("unconfigured strata client on an encrypting cluster: %v", err)
				}
				return
			}
			// Without the handshake: refused with Hadoop's message.
			plain := c.Client(c.Superuser())
			f, err := plain.OpenFile(context.Background(), "/cli")
			if err == nil {
				_, err = io.ReadAll(f)
				f.Close()
			}
			if err == nil || !strings.Contains(err.Error(), "instead of deadbeef") {
				t.Fatalf("a client without SASL: %v", err)
			}
			if _, err := exec.Command(bin, "-fs", "hdfs://"+c.Addr(), "dfs", "-cat", "/cli").Output(); err == nil {
				t.Fatal("strata without dfs.data.transfer.protection read the file")
			}
			noSASL, _ := gohdfs.NewClient(gohdfs.ClientOptions{Addresses: []string{c.Addr()}, User: c.Superuser()})
			if _, err := noSASL.ReadFile("/go"); err == nil {
				t.Fatal("colinmarc without DataTransferProtection read the file")
			}
			noSASL.Close()
			if c.DataNode(0).Status().SASLRefusals+c.DataNode(1).Status().SASLRefusals == 0 {
				t.Error("no refusal counted")
			}
		})
	}
}

// firstBlock returns /f's first block with its token and a DataNode
// address, via the NameNode.
func firstBlock(t *testing.T, cl *hdfs.Client, p string) (*hdfspb.LocatedBlockProto, string) {
	t.Helper()
	var resp hdfspb.GetBlockLocationsResponseProto
	if err := cl.Call(context.Background(), "getBlockLocations", &hdfspb.GetBlockLocationsRequestProto{Src: proto.String(p), Offset: proto.Uint64(0), Length: proto.Uint64(1)}, &resp); err != nil {
		t.Fatal(err)
	}
	lb := resp.GetLocations().GetBlocks()[0]
	id := lb.GetLocs()[0].GetId()
	return lb, net.JoinHostPort(id.GetIpAddr(), strconv.Itoa(int(id.GetXferPort())))
}

func TestDataTransferProtectionRefusesBadTokens(t *testing.T) {
	c := saslCluster(t, map[string]string{"dfs.data.transfer.protection": "integrity"})
	opts := hdfs.Options{Addr: c.Addr(), User: c.Superuser(), DataTransferProtection: "integrity"}
	cl, err := hdfs.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	w, err := cl.CreateFile(ctx, "/f", fs.CreateOptions{Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	data := saslData(200000)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lb, addr := firstBlock(t, cl, "/f")
	good := lb.GetBlockToken()
	sasl := &datatransfer.Dialer{SASL: &datatransfer.SASLClient{QOPs: []string{digestmd5.AuthInt}, Timeout: 10 * time.Second}}
	read := func(d *datatransfer.Dialer, tok *hdfspb.TokenProto, daddr string) ([]byte, error) {
		conn, err := d.Dial(ctx, daddr, tok)
		if err != nil {
			return nil, err
		}
		br, err := datatransfer.NewBlockReader(ctx, conn, "test", lb.GetB(), tok, 0, int64(lb.GetB().GetNumBytes()))
		if err != nil {
			return nil, err
		}
		defer br.Close()
		return io.ReadAll(br)
	}
	if got, err := read(sasl, good, addr); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("good token: %d bytes, %v", len(got), err)
	}

	// A forged password, and an expired token correctly signed: refused
	// at the handshake, as a refused token.
	forged := proto.Clone(good).(*hdfspb.TokenProto)
	forged.Password = bytes.Repeat([]byte{7}, len(good.Password))
	if _, err := read(sasl, forged, addr); err == nil || !strings.Contains(err.Error(), "Mismatched response") {
		t.Fatalf("forged token: %v", err)
	}
	id, err := blocktoken.Decode(good.GetIdentifier())
	if err != nil {
		t.Fatal(err)
	}
	id.ExpiryMillis = time.Now().Add(-time.Minute).UnixMilli()
	var secret []byte
	for _, k := range c.NameNode().BlockTokens().ExportKeys().All {
		if k.ID == id.KeyID {
			secret = k.Secret
		}
	}
	mac := hmac.New(sha1.New, secret)
	mac.Write(id.Encode())
	expired := &hdfspb.TokenProto{Identifier: id.Encode(), Password: mac.Sum(nil), Kind: good.Kind, Service: good.Service}
	if _, err := read(sasl, expired, addr); !errors.Is(err, datatransfer.ErrAccessToken) || !strings.Contains(err.Error(), "is expired") {
		t.Fatalf("expired token: %v", err)
	}

	// A handshake with /f's block token authenticates the connection,
	// not the op: a read of another block with that token is refused, as
	// a refused token; with the other block's own token it is served.
	w, err = cl.CreateFile(ctx, "/g", fs.CreateOptions{Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data[:1000])
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lbB, addrB := firstBlock(t, cl, "/g")
	readB := func(opTok *hdfspb.TokenProto) ([]byte, error) {
		conn, err := sasl.Dial(ctx, addrB, good)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		br, err := datatransfer.NewBlockReader(ctx, conn, "test", lbB.GetB(), opTok, 0, int64(lbB.GetB().GetNumBytes()))
		if err != nil {
			return nil, err
		}
		defer br.Close()
		return io.ReadAll(br)
	}
	if _, err := readB(good); !errors.Is(err, datatransfer.ErrAccessToken) {
		t.Fatalf("block B read with block A's token after a handshake with it: %v", err)
	}
	if got, err := readB(lbB.GetBlockToken()); err != nil || !bytes.Equal(got, data[:1000]) {
		t.Fatalf("block B with its own token after a handshake with A's: %d bytes, %v", len(got), err)
	}

	// A relay that flips one byte of the DataNode's stream after the
	// handshake: the client's integrity check fails the read.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var relayed atomic.Int64
	go func() {
		for {
			down, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", addr)
			if err != nil {
				down.Close()
				return
			}
			go func() { io.Copy(up, down); up.Close() }()
			go func() {
				buf := make([]byte, 32<<10)
				flipped := false
				for {
					n, err := up.Read(buf)
					if n > 0 {
						at := relayed.Load()
						// Past the handshake (well under 1 KiB) and into block data.
						if !flipped && at+int64(n) > 20000 {
							buf[max(0, 20000-int(at))] ^= 0x10
							flipped = true
						}
						relayed.Add(int64(n))
						down.Write(buf[:n])
					}
					if err != nil {
						down.Close()
						return
					}
				}
			}()
		}
	}()
	_, err = read(sasl, good, ln.Addr().String())
	if !errors.Is(err, digestmd5.ErrIntegrity) {
		t.Fatalf("tampered stream: %v", err)
	}
}

// With the daemons as processes of the strata binary and
// dfs.data.transfer.protection=integrity: the NameNode's re-replication
// (a DataNode copying to another, TransferCommand) and the balancer's
// moves (REPLACE_BLOCK, and the target's COPY_BLOCK from the proxy) all
// pass the handshake, and files read back.
func TestDataTransferProtectionReplicationAndBalancer(t *testing.T) {
	const volume = 48 << 20
	prot := map[string]string{"dfs.block.access.token.enable": "true", "dfs.data.transfer.protection": "integrity",
		"dfs.datanode.balance.bandwidthPerSec": "20m"}
	c := testcluster.NewProcess(t, testcluster.Config{DataNodes: 1, DataNodeIP: loopbackIP,
		Volumes: []storage.Type{storage.Disk}, VolumeSize: func(i, v int) int64 { return volume }, Conf: prot})
	ctx := ctxT(t)
	cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: "root", BlockSize: 1 << 20, Replication: 1, DataTransferProtection: "integrity"})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	files := map[string][]byte{}
	for i := 0; i < 3; i++ {
		p := "/data/f" + strconv.Itoa(i)
		files[p] = patterned(6<<20, 40+i)
		if err := writeFile(ctx, cl, p, files[p]); err != nil {
			t.Fatal(err)
		}
	}
	c.AddDataNode()
	c.AddDataNode()
	time.Sleep(500 * time.Millisecond)

	// Re-replication: DataNode to DataNode.
	if err := cl.SetReplication(ctx, "/data/f0", 3); err != nil {
		t.Fatal(err)
	}
	c.WaitReplicated("/data/f0", 3, 60*time.Second)

	fast := []string{"-D", "dfs.data.transfer.protection=integrity", "-D", "dfs.heartbeat.interval=100ms",
		"-D", "dfs.namenode.redundancy.interval.seconds=200ms", "-D", "dfs.balancer.getBlocks.min-block-size=1024"}
	out, errOut, code := c.Run("root", append([]string{"balancer", "-threshold", "10"}, fast...)...)
	if code != 0 || !strings.Contains(out, "The cluster is balanced. Exiting...") {
		t.Fatalf("balancer: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	t.Logf("balancer:\n%s", out)
	for p, want := range files {
		got, err := readFile(ctx, cl, p)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s after balancing: %d bytes, %v", p, len(got), err)
		}
	}
	// WebHDFS: the DataNode's own client (the redirect target) speaks
	// the handshake too.
	web := "http://" + c.NameNodeHTTPAddr() + "/webhdfs/v1"
	body := patterned(300000, 9)
	req, _ := http.NewRequest(http.MethodPut, web+"/data/web?op=CREATE&user.name=root&overwrite=true&blocksize=1048576", bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("WebHDFS CREATE: %s %s", resp.Status, msg)
	}
	resp, err = http.Get(web + "/data/f1?op=OPEN&user.name=root")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, files["/data/f1"]) {
		t.Fatalf("WebHDFS OPEN: %s, %d bytes", resp.Status, len(got))
	}
	if got, err := readFile(ctx, cl, "/data/web"); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("reading WebHDFS's file: %d bytes, %v", len(got), err)
	}

	// f1 and f2 were written to the first DataNode only: the moves put
	// some of their blocks elsewhere.
	hosts := map[string]bool{}
	for _, p := range []string{"/data/f1", "/data/f2"} {
		locs, err := cl.BlockLocations(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range locs {
			for _, h := range l.Hosts {
				hosts[h] = true
			}
		}
	}
	if len(hosts) < 2 {
		t.Errorf("the balancer moved nothing: /data/f1 and f2 on %v", hosts)
	}
}

// Peers that stall in the handshake (silent after connecting, or after
// the magic number, or trickling a message) block no one: other clients
// read meanwhile, and the DataNode drops the stalled ones at its deadline
// (dfs.client.socket-timeout, 1 s here). With two transfer slots, the
// read would be refused if the stalled handshakes held any.
func TestDataTransferProtectionStalledHandshakes(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 1, Conf: map[string]string{
		"dfs.block.access.token.enable": "true", "dfs.data.transfer.protection": "privacy", "dfs.client.socket-timeout": "1000",
		"dfs.datanode.max.transfer.threads": "2"}})
	ctx := context.Background()
	cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: c.Superuser(), DataTransferProtection: "privacy"})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	data := saslData(300000)
	w, err := cl.CreateFile(ctx, "/s", fs.CreateOptions{Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	addr := c.DataNodeAddr(0)
	var stalled []net.Conn
	for i := 0; i < 30; i++ {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 1:
			conn.Write([]byte{0xde, 0xad, 0xbe, 0xef})
		case 2:
			conn.Write([]byte{0xde, 0xad, 0xbe, 0xef, 0x80}) // a varint that never ends
		}
		stalled = append(stalled, conn)
	}
	start := time.Now()
	f, err := cl.OpenFile(ctx, "/s")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read beside stalled handshakes: %d bytes, %v", len(got), err)
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("the read took %v beside stalled handshakes", d)
	}
	// Each stalled connection is closed by the DataNode within its
	// deadline (plus slack).
	for i, conn := range stalled {
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 512)
		for {
			if _, err := conn.Read(buf); err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Fatalf("stalled connection %d still open after the handshake deadline", i)
				}
				break
			}
		}
		conn.Close()
	}
	if n := c.DataNode(0).Status().SASLRefusals; n < 30 {
		t.Errorf("%d refusals counted, want 30", n)
	}
}

// With dfs.encrypt.data.transfer, a data encryption key is good until its
// own expiry, which its nonce carries: a correctly signed key past it is
// refused at the handshake as an unknown key (the client fetches a new
// one), and a key whose expiry was pushed back no longer matches.
func TestDataTransferProtectionExpiredEncryptionKey(t *testing.T) {
	c := saslCluster(t, map[string]string{"dfs.encrypt.data.transfer": "true"})
	cl, err := hdfs.New(hdfs.Options{Addr: c.Addr(), User: c.Superuser(), EncryptDataTransfer: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	w, err := cl.CreateFile(ctx, "/e", fs.CreateOptions{Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	data := saslData(5000)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lb, addr := firstBlock(t, cl, "/e")
	var resp hdfspb.GetDataEncryptionKeyResponseProto
	if err := cl.Call(ctx, "getDataEncryptionKey", &hdfspb.GetDataEncryptionKeyRequestProto{}, &resp); err != nil {
		t.Fatal(err)
	}
	good := resp.GetDataEncryptionKey()
	if len(good.GetNonce()) != 16 {
		t.Fatalf("nonce of %d bytes", len(good.GetNonce()))
	}
	read := func(k *hdfspb.DataEncryptionKeyProto) ([]byte, error) {
		d := &datatransfer.Dialer{SASL: &datatransfer.SASLClient{Timeout: 10 * time.Second,
			EncryptionKey: func(context.Context) (*hdfspb.DataEncryptionKeyProto, error) { return k, nil }}}
		conn, err := d.Dial(ctx, addr, lb.GetBlockToken())
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		br, err := datatransfer.NewBlockReader(ctx, conn, "test", lb.GetB(), lb.GetBlockToken(), 0, int64(len(data)))
		if err != nil {
			return nil, err
		}
		defer br.Close()
		return io.ReadAll(br)
	}
	if got, err := read(good); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("good key: %d bytes, %v", len(got), err)
	}
	var secret []byte
	for _, k := range c.NameNode().BlockTokens().ExportKeys().All {
		if k.ID == int32(good.GetKeyId()) {
			secret = k.Secret
		}
	}
	withExpiry := func(exp time.Time, resign bool) *hdfspb.DataEncryptionKeyProto {
		k := proto.Clone(good).(*hdfspb.DataEncryptionKeyProto)
		k.Nonce = append(bytes.Clone(good.Nonce[:8]), make([]byte, 8)...)
		for i := range 8 {
			k.Nonce[15-i] = byte(exp.UnixMilli() >> (8 * i))
		}
		if resign {
			mac := hmac.New(sha1.New, secret)
			mac.Write(k.Nonce)
			k.EncryptionKey = mac.Sum(nil)
		}
		return k
	}
	if _, err := read(withExpiry(time.Now().Add(-time.Minute), true)); !errors.Is(err, datatransfer.ErrUnknownKey) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired key: %v", err)
	}
	if _, err := read(withExpiry(time.Now().Add(48*time.Hour), false)); err == nil || !strings.Contains(err.Error(), "Mismatched response") {
		t.Fatalf("key with a forged expiry: %v", err)
	}
}
