package ipc

import (
	"bufio"
	"context"
	"encoding/base64"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/digestmd5"
	"github.com/stratafs/strata/internal/proto/ipcpb"
	"github.com/stratafs/strata/internal/security"
)

const whoProtocol = "org.example.WhoProtocol"

// tokenServer serves whoProtocol ("who" answers user, real user and auth
// method) with TOKEN authentication over a map of live tokens.
type tokenServer struct {
	mu   sync.Mutex
	live map[string][]byte // identifier → password
	addr string
}

func startTokenServer(t *testing.T, qops byte) *tokenServer {
	t.Helper()
	ts := &tokenServer{live: map[string][]byte{}}
	mech := &TokenMechanism{QOPs: qops, Retrieve: DelegationRetriever(func(ident []byte) ([]byte, string, error) {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		pw, ok := ts.live[string(ident)]
		id, err := delegation.DecodeIdentifier(ident)
		if err != nil {
			return nil, "", Errorf(delegation.ClassInvalidToken, "token is malformed")
		}
		if !ok {
			return nil, "", Errorf(delegation.ClassInvalidToken, "token (%v) can't be found in cache", id)
		}
		return pw, id.User(), nil
	})}
	s := NewServer(ServerConfig{HeaderTimeout: 2 * time.Second, SASL: &SASLConfig{
		Mechanisms: []SASLMechanism{mech},
		MapUser:    func(p string) (string, error) { return p, nil },
	}})
	s.Register(whoProtocol, map[string]Method{
		"who": Unary(func(ctx context.Context, req *ipcpb.UserInformationProto) (*ipcpb.UserInformationProto, error) {
			c, _ := CallerFrom(ctx)
			return &ipcpb.UserInformationProto{EffectiveUser: proto.String(c.User + "|" + c.RealUser + "|" + string(c.Auth) + "|" + req.GetEffectiveUser()[:1])}, nil
		}),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	ts.addr = ln.Addr().String()
	return ts
}

func (ts *tokenServer) issue(owner, realUser string, seq int32) delegation.Token {
	id := delegation.Identifier{Owner: owner, Renewer: "jt", RealUser: realUser, IssueDate: 1, MaxDate: 2, SequenceNumber: seq, MasterKeyID: 1}
	pw := delegation.Password(id.Bytes(), []byte("master key"))
	ts.mu.Lock()
	ts.live[string(id.Bytes())] = pw
	ts.mu.Unlock()
	return delegation.Token{Identifier: id.Bytes(), Password: pw, Kind: delegation.Kind, Service: ts.addr}
}

func (ts *tokenServer) cancel(t delegation.Token) {
	ts.mu.Lock()
	delete(ts.live, string(t.Identifier))
	ts.mu.Unlock()
}

func tokWho(c *Client, payload string) (string, error) {
	var resp ipcpb.UserInformationProto
	err := c.Call(context.Background(), "who", &ipcpb.UserInformationProto{EffectiveUser: proto.String(payload)}, &resp)
	return resp.GetEffectiveUser(), err
}

func TestTokenAuthEachProtection(t *testing.T) {
	SetLogin(nil, nil)
	big := strings.Repeat("y", 200000) // several DIGEST-MD5 messages' worth
	for _, prot := range []string{"authentication", "integrity", "privacy", "authentication,privacy"} {
		t.Run(prot, func(t *testing.T) {
			q, _ := security.ParseProtection(prot)
			ts := startTokenServer(t, q)
			tok := ts.issue("alice@EXAMPLE.COM", "", 1)
			c := NewClient(ClientConfig{Addr: ts.addr, Protocol: whoProtocol, Tokens: []delegation.Token{tok}, QOPs: q})
			defer c.Close()
			for i := 0; i < 3; i++ {
				got, err := tokWho(c, big)
				if err != nil {
					t.Fatal(err)
				}
				if got != "alice||TOKEN|y" {
					t.Fatalf("caller %q, want alice as TOKEN", got)
				}
			}
			c.mu.Lock()
			cs := c.conn.sasl
			c.mu.Unlock()
			if want := security.Strongest(q); cs.qop != want {
				t.Fatalf("negotiated %v, want %v", cs.qop, want)
			}
		})
	}
}

func TestTokenAuthProxiedOwnerAndSelection(t *testing.T) {
	SetLogin(nil, nil)
	ts := startTokenServer(t, byte(security.QOPIntegrity))
	tok := ts.issue("bob", "oozie/host@EXAMPLE.COM", 2)
	other := tok
	other.Kind = "mapreduce.job"
	wrongSvc := ts.issue("carol", "", 3)
	wrongSvc.Service = "10.9.9.9:1"
	// The token of the right kind and service is chosen among others.
	c := NewClient(ClientConfig{Addr: ts.addr, Protocol: whoProtocol, Tokens: []delegation.Token{other, wrongSvc, tok}, QOPs: 7})
	defer c.Close()
	if got, err := tokWho(c, "x"); err != nil || got != "bob|oozie|TOKEN|x" {
		t.Fatalf("proxied token: %q, %v", got, err)
	}
	// No token for this server and no Kerberos login: the client cannot
	// authenticate, with Hadoop's message.
	c2 := NewClient(ClientConfig{Addr: ts.addr, Protocol: whoProtocol, Tokens: []delegation.Token{wrongSvc}})
	defer c2.Close()
	// Without a login or a token the client speaks simple and is refused.
	if _, err := tokWho(c2, "x"); err == nil || !strings.Contains(err.Error(), "SIMPLE authentication is not enabled.  Available:[TOKEN]") {
		t.Fatalf("without a matching token: %v", err)
	}
}

func TestTokenAuthRefusals(t *testing.T) {
	SetLogin(nil, nil)
	ts := startTokenServer(t, byte(security.QOPPrivacy))
	tok := ts.issue("alice", "", 4)
	c := NewClient(ClientConfig{Addr: ts.addr, Protocol: whoProtocol, Tokens: []delegation.Token{tok}, QOPs: 7})
	if _, err := tokWho(c, "x"); err != nil {
		t.Fatal(err)
	}
	c.Close()

	// A cancelled token: the client sees the secret manager's InvalidToken.
	ts.cancel(tok)
	c = NewClient(ClientConfig{Addr: ts.addr, Protocol: whoProtocol, Tokens: []delegation.Token{tok}, QOPs: 7})
	_, err := tokWho(c, "x")
	c.Close()
	if ClassOf(err) != delegation.ClassInvalidToken || !strings.Contains(err.Error(), "token (HDFS_DELEGATION_TOKEN token 4 for alice with renewer jt) can't be found in cache") {
		t.Fatalf("cancelled token: class %q, %v", ClassOf(err), err)
	}

	// A forged password fails the digest.
	forged := ts.issue("alice", "", 5)
	forged.Password = []byte("guess")
	c = NewClient(ClientConfig{Addr: ts.addr, Protocol: whoProtocol, Tokens: []delegation.Token{forged}, QOPs: 7})
	_, err = tokWho(c, "x")
	c.Close()
	if ClassOf(err) != ClassSaslException || !strings.Contains(err.Error(), "Mismatched response") {
		t.Fatalf("forged token: class %q, %v", ClassOf(err), err)
	}
}

// The username and password are the base64 of the token's identifier and
// password, as Hadoop's SaslRpcClient sends them: a DIGEST-MD5 client
// built by hand from those strings is accepted.
func TestTokenAuthCredentialEncoding(t *testing.T) {
	ts := startTokenServer(t, byte(security.QOPAuth))
	tok := ts.issue("alice", "", 7)
	mech := &TokenMechanism{Retrieve: func(ident []byte) ([]byte, string, string, error) {
		return tok.Password, "alice", "", nil
	}}
	a, sess, err := mech.negotiate(nil)
	if err != nil || a.GetProtocol() != "" || a.GetServerId() != "default" || a.GetMechanism() != "DIGEST-MD5" {
		t.Fatalf("entry %v, %v", a, err)
	}
	dc, _ := digestmd5.NewClient(digestmd5.ClientConfig{ServerName: "default",
		Username: base64.StdEncoding.EncodeToString(tok.Identifier), Password: base64.StdEncoding.EncodeToString(tok.Password)})
	resp, err := dc.Respond(a.GetChallenge())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(resp), `digest-uri="/default"`) {
		t.Fatalf("digest-uri in %s", resp)
	}
	rsp, done, err := sess.Step(resp)
	if err != nil || !done || dc.Verify(rsp) != nil || sess.Principal() != "alice" {
		t.Fatalf("step: %v %v", done, err)
	}
}

// A client authenticated with alice's token that names root in its
// connection context is refused.
func TestTokenAuthClaimingAnotherUser(t *testing.T) {
	ts := startTokenServer(t, byte(security.QOPAuth))
	tok := ts.issue("alice", "", 8)
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(nc)
	id := NewClientID()
	if _, err := nc.Write([]byte{'h', 'r', 'p', 'c', Version, 0, AuthSASL}); err != nil {
		t.Fatal(err)
	}
	cfg := ClientConfig{Addr: ts.addr, Protocol: whoProtocol}
	if _, err := saslConnect(nc, br, &cfg, nil, &tok, byte(security.QOPAuth), id); err != nil {
		t.Fatal(err)
	}
	ctxMsg := &ipcpb.IpcConnectionContextProto{Protocol: proto.String(whoProtocol),
		UserInfo: &ipcpb.UserInformationProto{EffectiveUser: proto.String("root")}}
	hdr := &ipcpb.RpcRequestHeaderProto{RpcKind: ipcpb.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
		RpcOp: ipcpb.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(), CallId: proto.Int32(callIDConnectionContext), ClientId: id}
	buf, err := appendFrame(nil, hdr, ctxMsg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(buf); err != nil {
		t.Fatal(err)
	}
	frame, err := readFrame(br, maxSASLToken, nil)
	if err != nil {
		t.Fatalf("no refusal: %v", err)
	}
	var rh ipcpb.RpcResponseHeaderProto
	if _, err := unmarshalDelimited(frame, &rh); err != nil {
		t.Fatal(err)
	}
	if rh.GetStatus() != ipcpb.RpcResponseHeaderProto_FATAL || !strings.Contains(rh.GetErrorMsg(), "Authenticated user (alice (auth:TOKEN)) doesn't match what the client claims to be (root)") {
		t.Fatalf("claiming root: %v %q", rh.GetStatus(), rh.GetErrorMsg())
	}
}

// TestTokenOnly: a TokenOnly client authenticates with its token for the
// server and nothing else; without one it does not connect at all (no
// simple authentication, no Kerberos login).
func TestTokenOnly(t *testing.T) {
	SetLogin(nil, nil)
	ts := startTokenServer(t, byte(security.QOPAuth))
	tok := ts.issue("alice", "", 4)
	tok.Service = TokenService(ts.addr)
	c := NewClient(ClientConfig{Addr: ts.addr, Protocol: whoProtocol, User: "mallory", Tokens: []delegation.Token{tok}, TokenOnly: true})
	defer c.Close()
	if got, err := tokWho(c, "x"); err != nil || got != "alice||TOKEN|x" {
		t.Fatalf("with the token: %q, %v", got, err)
	}
	other := tok
	other.Service = "10.9.9.9:1"
	c2 := NewClient(ClientConfig{Addr: ts.addr, Protocol: whoProtocol, Tokens: []delegation.Token{other}, TokenOnly: true})
	defer c2.Close()
	if _, err := tokWho(c2, "x"); err == nil || !strings.Contains(err.Error(), "Client cannot authenticate via:[TOKEN]: no token for "+ts.addr) {
		t.Fatalf("without a token for the server: %v", err)
	}
}
