package minikdc_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/stratafs/strata/internal/minikdc"
)

// TestKDCIssuesTicketsGokrb5Accepts runs the real KDC, kinits a user with
// the MIT tool, and checks gokrb5 (what strata's daemons and colinmarc/hdfs
// use) reads that cache, gets a service ticket and decrypts it with the
// service's keytab; and that a short ticket expires.
func TestKDCIssuesTicketsGokrb5Accepts(t *testing.T) {
	if err := minikdc.Available(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	kdc, err := minikdc.Start(dir, minikdc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kdc.Close()
	if err := kdc.AddUser("alice", "alice-pw"); err != nil {
		t.Fatal(err)
	}
	ktPath := filepath.Join(dir, "nn.keytab")
	if err := kdc.AddService(ktPath, "nn/localhost"); err != nil {
		t.Fatal(err)
	}
	cc := filepath.Join(dir, "alice.cc")
	if err := kdc.Kinit(cc, "alice", "alice-pw", 0); err != nil {
		t.Fatal(err)
	}
	if err := kdc.Kinit(cc, "alice", "wrong", 0); err == nil {
		t.Fatal("kinit with a wrong password succeeded")
	}

	cfg, err := config.Load(kdc.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := credentials.LoadCCache(cc)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.NewFromCCache(cache, cfg, client.DisablePAFXFAST(true))
	if err != nil {
		t.Fatal(err)
	}
	tkt, _, err := cl.GetServiceTicket("nn/localhost")
	if err != nil {
		t.Fatalf("service ticket: %v", err)
	}
	kt, err := keytab.Load(ktPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := tkt.DecryptEncPart(kt, nil); err != nil {
		t.Fatalf("keytab does not decrypt the ticket: %v", err)
	}
	if got := tkt.DecryptedEncPart.CName.PrincipalNameString(); got != "alice" {
		t.Fatalf("ticket client = %q, want alice", got)
	}

	// The service can log in from its keytab too.
	svc := client.NewWithKeytab("nn/localhost", kdc.Realm, kt, cfg, client.DisablePAFXFAST(true))
	if err := svc.Login(); err != nil {
		t.Fatalf("keytab login: %v", err)
	}

	short := filepath.Join(dir, "short.cc")
	if err := kdc.Kinit(short, "alice", "alice-pw", 2*time.Second); err != nil {
		t.Fatal(err)
	}
	c2, err := credentials.LoadCCache(short)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second) // lifetime + clock skew + 1
	if cl2, err := client.NewFromCCache(c2, cfg, client.DisablePAFXFAST(true)); err == nil {
		if _, _, err := cl2.GetServiceTicket("nn/localhost"); err == nil {
			t.Fatal("an expired TGT still got a service ticket")
		}
	}
}
