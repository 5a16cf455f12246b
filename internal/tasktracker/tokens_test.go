package tasktracker

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/jobtoken"
	"github.com/stratafs/strata/internal/proto/mrpb"
)

func TestWriteTokenFile(t *testing.T) {
	hdfsTok := delegation.Token{Identifier: []byte{0, 1}, Password: []byte("pw"), Kind: delegation.Kind, Service: "127.0.0.1:8020"}
	creds := delegation.WriteCredentials([]delegation.AliasToken{{Alias: hdfsTok.Service, Token: hdfsTok}})
	secret := []byte("job secret")

	// A reduce in kerberos mode: the delegation token and its job token
	// for the JobTracker; the spec no longer carries the credentials.
	dir := t.TempDir()
	spec := &mrpb.TaskSpec{JobId: proto.String("job_1_0001"), JobToken: secret, Credentials: creds}
	path, err := writeTokenFile(dir, spec, "jt:9001", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Credentials != nil {
		t.Fatal("the credentials stayed in the spec the child reads")
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v", fi.Mode(), err)
	}
	got, err := delegation.ReadCredentialsFile(path)
	if err != nil || len(got) != 2 {
		t.Fatalf("read back %d tokens, %v", len(got), err)
	}
	if got[0].Token.Service != hdfsTok.Service || got[0].Token.Kind != delegation.Kind {
		t.Fatalf("first token %+v", got[0].Token)
	}
	jtok := got[1].Token
	if id, err := jobtoken.ParseIdentifier(jtok.Identifier); err != nil || id != "job_1_0001" || jtok.Kind != "mapreduce.job" || jtok.Service != "jt:9001" || string(jtok.Password) != string(secret) {
		t.Fatalf("job token %+v (%q, %v)", jtok, id, err)
	}

	// Simple mode, no credentials: no file.
	spec = &mrpb.TaskSpec{JobId: proto.String("job_1_0001"), JobToken: secret}
	if path, err := writeTokenFile(t.TempDir(), spec, "jt:9001", nil, false); err != nil || path != "" {
		t.Fatalf("simple mode: %q, %v", path, err)
	}
	// Malformed credentials fail the attempt.
	spec = &mrpb.TaskSpec{Credentials: []byte("junk")}
	if _, err := writeTokenFile(t.TempDir(), spec, "jt:9001", nil, true); err == nil {
		t.Fatal("junk credentials were written")
	}
}

// The token file is created afresh, never through a link the task user
// planted in its directory.
func TestWriteTokenFileRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, tokenFileName)); err != nil {
		t.Fatal(err)
	}
	spec := &mrpb.TaskSpec{JobId: proto.String("job_1_0001"), JobToken: []byte("secret")}
	if _, err := writeTokenFile(dir, spec, "jt:9001", nil, true); err == nil {
		t.Fatal("wrote the token file through a link")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("the link's target became %q", b)
	}
}
