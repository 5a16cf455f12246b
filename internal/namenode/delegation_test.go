package namenode_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/namenode"
	"github.com/stratafs/strata/internal/testcluster"
)

func alwaysUseTokens(cfg *namenode.Config) { cfg.Delegation.AlwaysUse = true }

// privateHome makes /home/alice, mode 700, owned by alice: only alice
// (or the superuser) may list it.
func privateHome(t *testing.T, c *testcluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	su := c.Client(c.Superuser())
	if err := su.Mkdirs(ctx, "/home", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := su.Mkdirs(ctx, "/home/alice", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := su.SetOwner(ctx, "/home/alice", "alice", "alice"); err != nil {
		t.Fatal(err)
	}
}

// webToken asks the NameNode at httpAddr for a token over WebHDFS.
func webToken(t *testing.T, httpAddr, user, renewer string) string {
	t.Helper()
	r := curl(t, "http://"+httpAddr+"/webhdfs/v1/?op=GETDELEGATIONTOKEN&user.name="+user+"&renewer="+renewer)
	if r.status != 200 {
		t.Fatalf("GETDELEGATIONTOKEN: %d %s", r.status, r.body)
	}
	s, _ := r.object(t, "Token")["urlString"].(string)
	if s == "" {
		t.Fatalf("GETDELEGATIONTOKEN: %s", r.body)
	}
	return s
}

// TestDelegationTokenWebHDFS: a token from GETDELEGATIONTOKEN lets a
// request without user.name act as its owner, through the DataNode
// redirects too; renewal is for the renewer; once cancelled the token is
// refused with Hadoop's InvalidToken RemoteException.
func TestDelegationTokenWebHDFS(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{DataNodes: 1, NameNode: alwaysUseTokens})
	privateHome(t, c)
	base := "http://" + c.NameNode().HTTPAddr() + "/webhdfs/v1"
	enc := webToken(t, c.NameNode().HTTPAddr(), "alice", "alice")
	tok, err := delegation.DecodeURLString(enc)
	if err != nil {
		t.Fatal(err)
	}
	id, err := delegation.DecodeIdentifier(tok.Identifier)
	if err != nil || id.Owner != "alice" || id.Renewer != "alice" || tok.Kind != delegation.WebHDFSKind || tok.Service != c.NameNode().RPCAddr() {
		t.Fatalf("token %+v %+v %v", tok, id, err)
	}
	dt := "delegation=" + url.QueryEscape(enc)

	curl(t, base+"/home/alice?op=LISTSTATUS&user.name=bob").want(t, "bob lists", 403,
		`{"RemoteException":{"exception":"AccessControlException","javaClassName":"org.apache.hadoop.security.AccessControlException","message":"Permission denied: user=bob, access=READ_EXECUTE, inode=\"/home/alice\":alice:alice:drwx------"}}`)
	curl(t, base+"/home/alice?op=LISTSTATUS&"+dt).want(t, "LISTSTATUS with the token", 200, `{"FileStatuses":{"FileStatus":[]}}`)
	curl(t, base+"/home/alice?op=LISTSTATUS&user.name=bob&"+dt).want(t, "token with another user.name", 403,
		`{"RemoteException":{"exception":"IOException","javaClassName":"java.io.IOException","message":"Usernames not matched: name=bob != expected=alice"}}`)
	curl(t, base+"/?op=GETDELEGATIONTOKEN&"+dt).want(t, "token from a token", 400,
		`{"RemoteException":{"exception":"IllegalArgumentException","javaClassName":"java.lang.IllegalArgumentException","message":"delegation parameter is not null."}}`)

	// A tampered password and a forged identifier (owner hdfs, alice's
	// password) are refused, at the NameNode and on renewal.
	tampered := tok
	tampered.Password = append([]byte(nil), tok.Password...)
	tampered.Password[0] ^= 1
	forgedID := id
	forgedID.Owner = "hdfs"
	forged := tok
	forged.Identifier = forgedID.Bytes()
	for _, c := range []struct {
		name string
		tok  delegation.Token
		msg  string
	}{
		{"tampered password", tampered, "is invalid, password doesn't match"},
		{"forged identifier", forged, "can't be found in cache"},
	} {
		r := curl(t, base+"/home/alice?op=LISTSTATUS&delegation="+url.QueryEscape(c.tok.EncodeToURLString()))
		e := r.object(t, "RemoteException")
		if r.status != 403 || e["javaClassName"] != delegation.ClassInvalidToken || !strings.Contains(e["message"].(string), c.msg) {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
		if r := curl(t, base+"/?op=LISTSTATUS&user.name=hdfs&delegation="+url.QueryEscape(c.tok.EncodeToURLString())); r.status != 403 {
			t.Errorf("%s as hdfs: %d %s", c.name, r.status, r.body)
		}
	}
	r := curl(t, "-X", "PUT", base+"/?op=RENEWDELEGATIONTOKEN&user.name=alice&token="+url.QueryEscape(tampered.EncodeToURLString()))
	if r.status != 403 || !strings.Contains(string(r.body), "is trying to renew a token") || !strings.Contains(string(r.body), "with wrong password") {
		t.Errorf("renew with a tampered password: %d %s", r.status, r.body)
	}

	// CREATE and OPEN through the DataNode with the token alone.
	step1 := curl(t, "-X", "PUT", base+"/home/alice/f?op=CREATE&"+dt)
	loc := step1.header.Get("Location")
	if step1.status != 307 || !strings.Contains(loc, dt) || !strings.Contains(loc, "user.name=alice") {
		t.Fatalf("CREATE: %d %q", step1.status, loc)
	}
	local := writeTemp(t, []byte("hello from a token"))
	curl(t, "-X", "PUT", "-T", local, loc).want(t, "CREATE at the DataNode", 201, "")
	st := curl(t, base+"/home/alice/f?op=GETFILESTATUS&"+dt).object(t, "FileStatus")
	if st["owner"] != "alice" || st["length"] != 18.0 {
		t.Errorf("created file %v", st)
	}
	if r := curl(t, "-L", base+"/home/alice/f?op=OPEN&"+dt); r.status != 200 || string(r.body) != "hello from a token" {
		t.Errorf("OPEN: %d %q", r.status, r.body)
	}

	// Renewal: bob is not the renewer; alice is.
	tq := "token=" + url.QueryEscape(enc)
	r = curl(t, "-X", "PUT", base+"/?op=RENEWDELEGATIONTOKEN&user.name=bob&"+tq)
	if r.status != 403 || !strings.Contains(string(r.body), "bob tries to renew a token (HDFS_DELEGATION_TOKEN token 1 for alice with renewer alice) with non-matching renewer alice") {
		t.Errorf("renew by bob: %d %s", r.status, r.body)
	}
	r = curl(t, "-X", "PUT", base+"/?op=RENEWDELEGATIONTOKEN&user.name=alice&"+tq)
	var renewed map[string]int64
	if r.status != 200 || json.Unmarshal(r.body, &renewed) != nil || renewed["long"] <= id.IssueDate {
		t.Errorf("renew: %d %s", r.status, r.body)
	}

	// Cancel; the token is then refused.
	curl(t, "-X", "PUT", base+"/?op=CANCELDELEGATIONTOKEN&user.name=alice&"+tq).want(t, "cancel", 200, "")
	r = curl(t, base+"/home/alice?op=LISTSTATUS&"+dt)
	e := r.object(t, "RemoteException")
	if r.status != 403 || e["exception"] != "InvalidToken" || e["javaClassName"] != "org.apache.hadoop.security.token.SecretManager$InvalidToken" ||
		!strings.Contains(e["message"].(string), "can't be found in cache") {
		t.Errorf("cancelled token: %d %s", r.status, r.body)
	}
	if r := curl(t, "-X", "PUT", base+"/home/alice/g?op=CREATE&"+dt); r.status != 403 {
		t.Errorf("CREATE with the cancelled token: %d %s", r.status, r.body)
	}
}

// TestDelegationTokenNotIssuedInSimpleMode: without always-use there is
// no token, as Hadoop's NameNode without security.
func TestDelegationTokenNotIssuedInSimpleMode(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{})
	curl(t, "http://"+c.NameNode().HTTPAddr()+"/webhdfs/v1/?op=GETDELEGATIONTOKEN&user.name=alice").want(t, "GETDELEGATIONTOKEN", 200, `{"Token":null}`)
	tok, err := c.Client("alice").GetDelegationToken(context.Background(), "alice")
	if tok != nil || err != nil {
		t.Fatalf("RPC: %+v %v", tok, err)
	}
}

// TestDelegationTokenSurvivesRestart: tokens, renewals and cancellations
// are in the edit log and the image (kill -9: the process test in
// cmd/strata/cli).
func TestDelegationTokenSurvivesRestart(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{NameNode: alwaysUseTokens})
	privateHome(t, c)
	ctx := context.Background()
	alice := c.Client("alice")
	keep, err := alice.GetDelegationToken(ctx, "alice")
	if err != nil || keep == nil {
		t.Fatalf("get: %v", err)
	}
	gone, err := alice.GetDelegationToken(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := alice.CancelDelegationToken(ctx, gone); err != nil {
		t.Fatal(err)
	}
	list := func(what string, tok *delegation.Token, status int) {
		t.Helper()
		r := curl(t, "http://"+c.NameNode().HTTPAddr()+"/webhdfs/v1/home/alice?op=LISTSTATUS&delegation="+url.QueryEscape(tok.EncodeToURLString()))
		if r.status != status {
			t.Errorf("%s: %d %s, want %d", what, r.status, r.body, status)
		}
	}
	c.RestartNameNode() // from the edit log
	list("kept token after restart", keep, 200)
	list("cancelled token after restart", gone, 403)
	exp, err := c.Client("alice").RenewDelegationToken(ctx, keep)
	if err != nil || exp == 0 {
		t.Fatalf("renew after restart: %v", err)
	}
	// A checkpoint (the image) keeps them too.
	if err := c.NameNode().Checkpoint(); err != nil {
		t.Fatal(err)
	}
	c.RestartNameNode()
	list("kept token after an image", keep, 200)
	list("cancelled token after an image", gone, 403)
}

// TestDelegationTokenFailover: a token issued on the active NameNode
// validates on the new active after a failover, and the new active
// renews and cancels it.
func TestDelegationTokenFailover(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{NameNodes: 3, NameNode: alwaysUseTokens})
	privateHome(t, c)
	ctx := context.Background()
	tok, err := c.Client("alice").GetDelegationToken(ctx, "alice")
	if err != nil || tok == nil {
		t.Fatalf("get: %v", err)
	}
	c.StopNameNodeAt(c.ActiveNameNode())
	active := c.NameNodeAt(c.ActiveNameNode())
	q := "?op=LISTSTATUS&delegation=" + url.QueryEscape(tok.EncodeToURLString())
	curl(t, "http://"+active.HTTPAddr()+"/webhdfs/v1/home/alice"+q).want(t, "token on the new active", 200, `{"FileStatuses":{"FileStatus":[]}}`)
	if _, err := c.Client("alice").RenewDelegationToken(ctx, tok); err != nil {
		t.Fatalf("renew on the new active: %v", err)
	}
	if err := c.Client("alice").CancelDelegationToken(ctx, tok); err != nil {
		t.Fatalf("cancel on the new active: %v", err)
	}
	if r := curl(t, "http://"+active.HTTPAddr()+"/webhdfs/v1/home/alice"+q); r.status != 403 {
		t.Errorf("cancelled token on the new active: %d %s", r.status, r.body)
	}
}

// TestDelegationMasterKeyRolls: the active NameNode rolls the master key
// every key update interval on its own, and a roll forgets the tokens
// that expired before it.
func TestDelegationMasterKeyRolls(t *testing.T) {
	c := testcluster.New(t, testcluster.Config{NameNode: func(cfg *namenode.Config) {
		cfg.Delegation.AlwaysUse = true
		cfg.Delegation.Timing = delegation.Config{KeyUpdateInterval: 1000, MaxLifetime: 60_000, RenewInterval: 500}
	}})
	ctx := context.Background()
	first, err := c.Client("alice").GetDelegationToken(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	q := func(tok *delegation.Token) string {
		return "http://" + c.NameNode().HTTPAddr() + "/webhdfs/v1/?op=GETFILESTATUS&delegation=" + url.QueryEscape(tok.EncodeToURLString())
	}
	c.WaitFor("the first token to be forgotten", 20e9, func() bool {
		r := curl(t, q(first))
		return r.status == 403 && strings.Contains(string(r.body), "can't be found in cache")
	})
	// Rolls go on without tokens being issued: the forgetting took a
	// second key; 3.5 key intervals later (without the timer the next
	// token would still use key 2) there are more.
	time.Sleep(3500 * time.Millisecond)
	tok, err := c.Client("alice").GetDelegationToken(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := delegation.DecodeIdentifier(tok.Identifier); id.MasterKeyID < 3 || id.SequenceNumber != 2 {
		t.Errorf("token after idle rolls: key %d, sequence %d", id.MasterKeyID, id.SequenceNumber)
	}
}
