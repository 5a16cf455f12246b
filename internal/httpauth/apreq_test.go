package httpauth

import (
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
)

const testRealm = "LOCAL.TEST"

// apreqFilter is a kerberos filter for HTTP/localhost@LOCAL.TEST whose
// keytab the test also uses to mint tickets, as a KDC would.
func apreqFilter(t *testing.T) (*Filter, *keytab.Keytab) {
	t.Helper()
	kt := keytab.New()
	if err := kt.AddEntry("HTTP/localhost", testRealm, "service-pw", time.Now(), 1, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	b, err := kt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "http.keytab")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	krb5 := filepath.Join(dir, "krb5.conf")
	if err := os.WriteFile(krb5, []byte("[libdefaults]\n\tdefault_realm = "+testRealm+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KRB5_CONFIG", krb5)
	f, err := New(Config{Type: TypeKerberos, Principal: "HTTP/localhost@" + testRealm, Keytab: path})
	if err != nil {
		t.Fatal(err)
	}
	return f, kt
}

// apreqHeader is the Authorization header of an AP-REQ for a ticket issued
// to tname@trealm, whose Authenticator names aname@arealm, with GSS flags.
func apreqHeader(t *testing.T, kt *keytab.Keytab, tname, trealm, aname, arealm string, gssFlags uint32) (string, types.Authenticator, types.EncryptionKey) {
	t.Helper()
	sname := types.NewPrincipalName(nametype.KRB_NT_SRV_INST, "HTTP/localhost")
	now := time.Now().UTC()
	tkt, key, err := messages.NewTicket(types.NewPrincipalName(nametype.KRB_NT_PRINCIPAL, tname), trealm,
		sname, testRealm, types.NewKrbFlags(), kt, etypeID.AES256_CTS_HMAC_SHA1_96, 1, now, now, now.Add(time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	auth, err := types.NewAuthenticator(arealm, types.NewPrincipalName(nametype.KRB_NT_PRINCIPAL, aname))
	if err != nil {
		t.Fatal(err)
	}
	ck := make([]byte, 24)
	binary.LittleEndian.PutUint32(ck[:4], 16)
	binary.LittleEndian.PutUint32(ck[20:], gssFlags)
	auth.Cksum = types.Checksum{CksumType: chksumtype.GSSAPI, Checksum: ck}
	req, err := messages.NewAPReq(tkt, key, auth)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	oid, _ := asn1.Marshal(gssapi.OIDKRB5.OID())
	mech := asn1tools.AddASNAppTag(append(append(oid, 0x01, 0x00), rb...), 0)
	st := spnego.SPNEGOToken{Init: true, NegTokenInit: spnego.NegTokenInit{MechTypes: []asn1.ObjectIdentifier{gssapi.OIDKRB5.OID()}, MechTokenBytes: mech}}
	b, err := st.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return "Negotiate " + base64.StdEncoding.EncodeToString(b), auth, key
}

func serve(f *Filter, authz string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/page", nil)
	req.Header.Set("Authorization", authz)
	f.Wrap(echoUser()).ServeHTTP(rec, req)
	return rec
}

// TestAPReqIdentityFromTicket: the user is the ticket's client, and an
// Authenticator naming another realm or user than its ticket (which the
// client encrypts itself; gokrb5 checks only the name) is refused, so a
// cross-realm hdfs@OTHER cannot pass as the local hdfs.
func TestAPReqIdentityFromTicket(t *testing.T) {
	f, kt := apreqFilter(t)
	h, _, _ := apreqHeader(t, kt, "alice", testRealm, "alice", testRealm, 0)
	if rec := serve(f, h); rec.Code != 200 || rec.Body.String() != "alice" {
		t.Fatalf("matching AP-REQ: %d %q", rec.Code, rec.Body)
	}
	for _, c := range []struct{ tname, trealm, aname, arealm string }{
		{"hdfs", "OTHER.TEST", "hdfs", testRealm},
		{"alice", testRealm, "hdfs", testRealm},
	} {
		h, _, _ := apreqHeader(t, kt, c.tname, c.trealm, c.aname, c.arealm, 0)
		if rec := serve(f, h); rec.Code != http.StatusUnauthorized || rec.Header().Get("Set-Cookie") != "" {
			t.Errorf("ticket %s@%s, authenticator %s@%s: %d %q", c.tname, c.trealm, c.aname, c.arealm, rec.Code, rec.Body)
		}
	}
	// A genuine foreign-realm ticket is not mapped (DEFAULT rule).
	h, _, _ = apreqHeader(t, kt, "hdfs", "OTHER.TEST", "hdfs", "OTHER.TEST", 0)
	if rec := serve(f, h); rec.Code != http.StatusForbidden {
		t.Errorf("hdfs@OTHER.TEST: %d %q", rec.Code, rec.Body)
	}
	// The same AP-REQ twice is a replay.
	h, _, _ = apreqHeader(t, kt, "bob", testRealm, "bob", testRealm, 0)
	if rec := serve(f, h); rec.Code != 200 {
		t.Fatalf("bob: %d", rec.Code)
	}
	if rec := serve(f, h); rec.Code != http.StatusUnauthorized {
		t.Errorf("replayed AP-REQ: %d", rec.Code)
	}
}

// TestMutualAuthentication: with GSS's mutual flag the answer carries an
// AP-REP that decrypts under the ticket's session key to the
// authenticator's ctime and cusec (what a GSS initiator checks); without
// it, the plain accept-completed token.
func TestMutualAuthentication(t *testing.T) {
	f, kt := apreqFilter(t)
	h, _, _ := apreqHeader(t, kt, "alice", testRealm, "alice", testRealm, 0)
	if rec := serve(f, h); rec.Code != 200 || rec.Header().Get("WWW-Authenticate") != negotiateCompleted {
		t.Fatalf("no mutual flag: %d %v", rec.Code, rec.Header())
	}
	h, auth, key := apreqHeader(t, kt, "alice", testRealm, "alice", testRealm, gssapi.ContextFlagMutual)
	rec := serve(f, h)
	if rec.Code != 200 {
		t.Fatalf("mutual: %d", rec.Code)
	}
	b64, ok := strings.CutPrefix(rec.Header().Get("WWW-Authenticate"), "Negotiate ")
	if !ok {
		t.Fatalf("WWW-Authenticate %q", rec.Header().Get("WWW-Authenticate"))
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	var resp spnego.NegTokenResp
	if err := resp.Unmarshal(raw); err != nil {
		t.Fatal(err)
	}
	if resp.State() != spnego.NegStateAcceptCompleted || !resp.SupportedMech.Equal(gssapi.OIDKRB5.OID()) {
		t.Fatalf("NegTokenResp %+v", resp)
	}
	var k5 spnego.KRB5Token
	if err := k5.Unmarshal(resp.ResponseToken); err != nil || !k5.IsAPRep() {
		t.Fatalf("response token: %v", err)
	}
	plain, err := crypto.DecryptEncPart(k5.APRep.EncPart, key, keyusage.AP_REP_ENCPART)
	if err != nil {
		t.Fatal(err)
	}
	var part messages.EncAPRepPart
	if err := part.Unmarshal(plain); err != nil {
		t.Fatal(err)
	}
	if !part.CTime.Equal(auth.CTime.Truncate(time.Second)) || part.Cusec != auth.Cusec {
		t.Fatalf("EncAPRepPart %v/%d, authenticator %v/%d", part.CTime, part.Cusec, auth.CTime, auth.Cusec)
	}
}
