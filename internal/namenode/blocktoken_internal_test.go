package namenode

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// startTestNameNode formats and starts a NameNode on loopback with the
// startup safe mode off; adjust changes its Config first.
func startTestNameNode(t *testing.T, adjust func(*Config)) *NameNode {
	t.Helper()
	cfg := DefaultConfig()
	cfg.NameDir = t.TempDir()
	cfg.RPCAddr, cfg.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Superuser = "hdfs"
	cfg.SafeModeThreshold, cfg.SafeModeExtension = 0, 0
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if adjust != nil {
		adjust(&cfg)
	}
	if _, err := Format(cfg, false); err != nil {
		t.Fatal(err)
	}
	nn, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := nn.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nn.Close() })
	return nn
}

// fakeDataNode registers a DataNode with one storage through the DataNode
// protocol and returns the block keys it was given.
func fakeDataNode(t *testing.T, nn *NameNode, uuid string) *dnpb.BlockKeys {
	t.Helper()
	dp := &datanodeProtocol{nn: nn, ns: nn.ns}
	resp, err := dp.register(as("hdfs"), &dnpb.RegisterRequest{Registration: &dnpb.Registration{
		DatanodeUuid: proto.String(uuid), IpAddr: proto.String("127.0.0.1"), XferPort: proto.Uint32(9866), InfoPort: proto.Uint32(9864),
		Storages: []*dnpb.StorageReport{{StorageId: proto.String("DS-" + uuid), StorageType: proto.Uint32(uint32(hdfspb.StorageTypeProto_DISK)),
			Capacity: proto.Uint64(1 << 40), Remaining: proto.Uint64(1 << 40)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetBlockKeys() == nil {
		t.Fatal("RegisterResponse carries no block keys")
	}
	return resp.GetBlockKeys()
}

func workerWith(t *testing.T, nn *NameNode, keys *dnpb.BlockKeys) *blocktoken.Manager {
	t.Helper()
	w := blocktoken.NewWorker(blocktoken.Config{BlockPoolID: nn.ns.blockPoolID})
	if err := w.ImportKeys(blocktoken.KeysFromProto(keys)); err != nil {
		t.Fatal(err)
	}
	return w
}

// checkModes checks that tok verifies for block id with exactly mode
// among READ, WRITE, COPY and REPLACE, and names user.
func checkModes(t *testing.T, what string, w *blocktoken.Manager, tok *hdfspb.TokenProto, id uint64, mode blocktoken.AccessMode, user string) {
	t.Helper()
	for _, m := range []blocktoken.AccessMode{blocktoken.Read, blocktoken.Write, blocktoken.Copy, blocktoken.Replace} {
		ident, err := w.Check(blocktoken.FromProto(tok), int64(id), m)
		switch {
		case m == mode && err != nil:
			t.Errorf("%s: token refused for %s: %v", what, m, err)
		case m == mode && ident.User != user:
			t.Errorf("%s: token for user %q, want %q", what, ident.User, user)
		case m != mode && err == nil:
			t.Errorf("%s: token accepted for %s, want only %s", what, m, mode)
		}
	}
	if _, err := w.Check(blocktoken.FromProto(tok), int64(id)+1, mode); err == nil {
		t.Errorf("%s: token accepted for another block", what)
	}
}

// With block tokens on, every located block carries a token for the
// caller with Hadoop's mode for the call, which a DataNode holding the
// NameNode's exported keys accepts for that mode only.
func TestLocatedBlockTokens(t *testing.T) {
	nn := startTestNameNode(t, func(c *Config) { c.BlockTokens = true; c.DefaultReplication = 1 })
	w := workerWith(t, nn, fakeDataNode(t, nn, "dn-1"))
	fakeDataNode(t, nn, "dn-2")
	cp := &clientProtocol{nn: nn, ns: nn.ns}
	ctx := as("alice")
	if _, err := cp.mkdirs(as("hdfs"), &hdfspb.MkdirsRequestProto{Src: proto.String("/user/alice"), Masked: &hdfspb.FsPermissionProto{Perm: proto.Uint32(0o777)}, CreateParent: proto.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	cr, err := cp.create(ctx, &hdfspb.CreateRequestProto{Src: proto.String("/user/alice/f"), Masked: &hdfspb.FsPermissionProto{Perm: proto.Uint32(0o644)},
		ClientName: proto.String("DFSClient_alice"), CreateFlag: proto.Uint32(createFlagCreate), Replication: proto.Uint32(1), BlockSize: proto.Uint64(1 << 20)})
	if err != nil {
		t.Fatal(err)
	}
	ab, err := cp.addBlock(ctx, &hdfspb.AddBlockRequestProto{Src: proto.String("/user/alice/f"), ClientName: proto.String("DFSClient_alice"), FileId: proto.Uint64(cr.GetFs().GetFileId())})
	if err != nil {
		t.Fatal(err)
	}
	blk := ab.GetBlock().GetB()
	checkModes(t, "addBlock", w, ab.GetBlock().GetBlockToken(), blk.GetBlockId(), blocktoken.Write, "alice")
	ident, _ := blocktoken.Decode(ab.GetBlock().GetBlockToken().GetIdentifier())
	if len(ident.StorageIDs) != 1 || ident.StorageIDs[0] != ab.GetBlock().GetStorageIDs()[0] || ident.StorageTypes[0] != "DISK" {
		t.Errorf("addBlock token names storages %v %v, want the targets' %v", ident.StorageTypes, ident.StorageIDs, ab.GetBlock().GetStorageIDs())
	}

	gl, err := cp.getBlockLocations(as("bob"), &hdfspb.GetBlockLocationsRequestProto{Src: proto.String("/user/alice/f"), Offset: proto.Uint64(0), Length: proto.Uint64(1 << 30)})
	if err != nil {
		t.Fatal(err)
	}
	checkModes(t, "getBlockLocations", w, gl.GetLocations().GetLastBlock().GetBlockToken(), blk.GetBlockId(), blocktoken.Read, "bob")

	ad, err := cp.getAdditionalDatanode(ctx, &hdfspb.GetAdditionalDatanodeRequestProto{Src: proto.String("/user/alice/f"), FileId: proto.Uint64(cr.GetFs().GetFileId()),
		Blk: blk, ExistingStorageUuids: ab.GetBlock().GetStorageIDs(), NumAdditionalNodes: proto.Uint32(1), ClientName: proto.String("DFSClient_alice")})
	if err != nil {
		t.Fatal(err)
	}
	checkModes(t, "getAdditionalDatanode", w, ad.GetBlock().GetBlockToken(), blk.GetBlockId(), blocktoken.Copy, "alice")

	up, err := cp.updateBlockForPipeline(ctx, &hdfspb.UpdateBlockForPipelineRequestProto{Block: blk, ClientName: proto.String("DFSClient_alice")})
	if err != nil {
		t.Fatal(err)
	}
	checkModes(t, "updateBlockForPipeline", w, up.GetBlock().GetBlockToken(), blk.GetBlockId(), blocktoken.Write, "alice")

	// Without tokens enabled the token is empty.
	off := startTestNameNode(t, nil)
	ocp := &clientProtocol{nn: off, ns: off.ns}
	fakeDataNode(t, off, "dn-1")
	ocr, err := ocp.create(as("hdfs"), &hdfspb.CreateRequestProto{Src: proto.String("/f"), Masked: &hdfspb.FsPermissionProto{Perm: proto.Uint32(0o644)},
		ClientName: proto.String("c"), CreateFlag: proto.Uint32(createFlagCreate), Replication: proto.Uint32(1), BlockSize: proto.Uint64(1 << 20)})
	if err != nil {
		t.Fatal(err)
	}
	oab, err := ocp.addBlock(as("hdfs"), &hdfspb.AddBlockRequestProto{Src: proto.String("/f"), ClientName: proto.String("c"), FileId: proto.Uint64(ocr.GetFs().GetFileId())})
	if err != nil {
		t.Fatal(err)
	}
	if tok := oab.GetBlock().GetBlockToken(); len(tok.GetIdentifier()) != 0 || len(tok.GetPassword()) != 0 {
		t.Errorf("tokens off, but addBlock's token is %v", tok)
	}
}

// Keys roll on the Namesystem's clock; each DataNode gets the new ones
// with its next heartbeat, once, and tokens minted after the roll verify
// with them.
func TestBlockKeysRollToDataNodes(t *testing.T) {
	nn := startTestNameNode(t, func(c *Config) { c.BlockTokens = true; c.BlockKeyUpdateInterval = time.Hour })
	var mu sync.Mutex
	now := time.Now()
	nn.ns.mu.Lock()
	nn.ns.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	nn.ns.mu.Unlock()
	first := fakeDataNode(t, nn, "dn-1")
	dp := &datanodeProtocol{nn: nn, ns: nn.ns}
	beat := func() *dnpb.BlockKeys {
		t.Helper()
		r, err := dp.heartbeat(as("hdfs"), &dnpb.HeartbeatRequest{DatanodeUuid: proto.String("dn-1")})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetBlockKeys()
	}
	if k := beat(); k != nil {
		t.Fatalf("heartbeat before any roll re-sent the keys")
	}
	nn.rollBlockKeys()
	if k := beat(); k != nil {
		t.Fatalf("keys re-sent though no interval passed")
	}
	mu.Lock()
	now = now.Add(time.Hour + time.Second)
	mu.Unlock()
	nn.rollBlockKeys()
	k := beat()
	if k == nil || k.GetCurrent().GetKeyId() == first.GetCurrent().GetKeyId() || !k.GetEnabled() {
		t.Fatalf("after a roll the heartbeat carries %v (first current key %d)", k, first.GetCurrent().GetKeyId())
	}
	if again := beat(); again != nil {
		t.Errorf("the rolled keys were sent twice")
	}
	tok, err := nn.tokens.Mint("alice", 7, []blocktoken.AccessMode{blocktoken.Read}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := workerWith(t, nn, k).Check(tok, 7, blocktoken.Read); err != nil {
		t.Errorf("a token minted after the roll fails with the rolled keys: %v", err)
	}
}

// WebHDFS redirects carry a redirect token for the user, operation and
// path, which a DataNode with the NameNode's keys accepts, and for
// nothing else. Tokens need not be enabled.
func TestWebHDFSRedirectTokens(t *testing.T) {
	nn := startTestNameNode(t, func(c *Config) { c.DefaultReplication = 1 })
	w := workerWith(t, nn, fakeDataNode(t, nn, "dn-1"))
	cp := &clientProtocol{nn: nn, ns: nn.ns}
	if _, err := cp.mkdirs(as("hdfs"), &hdfspb.MkdirsRequestProto{Src: proto.String("/d"), Masked: &hdfspb.FsPermissionProto{Perm: proto.Uint32(0o777)}, CreateParent: proto.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cases := []struct{ method, op, path string }{
		{"PUT", "CREATE", "/d/new file"},
		{"GET", "OPEN", "/d/empty"},
		{"GET", "GETFILECHECKSUM", "/d/empty"},
		{"POST", "APPEND", "/d/empty"},
	}
	if _, err := cp.create(as("alice"), &hdfspb.CreateRequestProto{Src: proto.String("/d/empty"), Masked: &hdfspb.FsPermissionProto{Perm: proto.Uint32(0o666)},
		ClientName: proto.String("c"), CreateFlag: proto.Uint32(createFlagCreate), Replication: proto.Uint32(1), BlockSize: proto.Uint64(1 << 20)}); err != nil {
		t.Fatal(err)
	}
	if _, err := cp.complete(as("alice"), &hdfspb.CompleteRequestProto{Src: proto.String("/d/empty"), ClientName: proto.String("c")}); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		u := fmt.Sprintf("http://%s/webhdfs/v1%s?op=%s&user.name=alice&noredirect=true", nn.HTTPAddr(), (&url.URL{Path: c.path}).EscapedPath(), c.op)
		req, _ := http.NewRequestWithContext(ctx, c.method, u, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var loc struct{ Location string }
		json.NewDecoder(resp.Body).Decode(&loc)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || loc.Location == "" {
			t.Fatalf("%s %s: %s, location %q", c.method, c.op, resp.Status, loc.Location)
		}
		ru, err := url.Parse(loc.Location)
		if err != nil {
			t.Fatal(err)
		}
		param := ru.Query().Get(blocktoken.RedirectParam)
		mode := redirectModes[c.op]
		redirectPath := ru.Path[len("/webhdfs/v1"):]
		if redirectPath != c.path {
			t.Errorf("%s redirects to path %q, want %q", c.op, redirectPath, c.path)
		}
		if err := w.CheckRedirect(param, "alice", c.op, redirectPath, mode); err != nil {
			t.Errorf("%s: redirect token refused: %v (%s)", c.op, err, loc.Location)
		}
		other := blocktoken.Write
		if mode == blocktoken.Write {
			other = blocktoken.Read
		}
		for what, err := range map[string]error{
			"another user": w.CheckRedirect(param, "mallory", c.op, redirectPath, mode),
			"another op":   w.CheckRedirect(param, "alice", "DELETE", redirectPath, mode),
			"another path": w.CheckRedirect(param, "alice", c.op, "/d/other", mode),
			"another mode": w.CheckRedirect(param, "alice", c.op, redirectPath, other),
		} {
			if err == nil {
				t.Errorf("%s: redirect token accepted for %s", c.op, what)
			}
		}
	}
}
