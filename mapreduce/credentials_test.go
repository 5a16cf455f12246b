package mapreduce

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/ipc"
)

func TestObtainTokensModes(t *testing.T) {
	c := conf.New()
	if b, err := obtainTokens(context.Background(), fs.Env{Conf: c}, c, "jt:9001"); b != nil || err != nil {
		t.Fatalf("simple mode: %v, %v", b, err)
	}
	c.Set("hadoop.security.authentication", "kerberos")
	if _, err := obtainTokens(context.Background(), fs.Env{Conf: c}, c, "jt:9001"); err == nil || !strings.Contains(err.Error(), "Can't get Master Kerberos principal for use as renewer") {
		t.Fatalf("no JobTracker principal: %v", err)
	}
	// A file system without tokens (file:) contributes none.
	c.Set("mapreduce.jobtracker.kerberos.principal", "jt/jthost@EXAMPLE.COM")
	if b, err := obtainTokens(context.Background(), fs.Env{Conf: c}, c, "jt:9001"); b != nil || err != nil {
		t.Fatalf("file system without tokens: %v, %v", b, err)
	}
}

// tokenFS is a local file system that issues tokens, recording the
// renewer asked for.
type tokenFS struct {
	fs.FileSystem
	renewers *[]string
}

func (f tokenFS) GetDelegationToken(ctx context.Context, renewer string) (*delegation.Token, error) {
	*f.renewers = append(*f.renewers, renewer)
	return &delegation.Token{Identifier: []byte("id"), Password: []byte("pw"), Kind: delegation.Kind, Service: "tokfs:1"}, nil
}

// The renewer is the JobTracker's principal mapped by auth_to_local, the
// JobTracker's own user.
func TestObtainTokensRenewer(t *testing.T) {
	var renewers []string
	fs.Register("tokfs", func(ctx context.Context, u *url.URL, env fs.Env) (fs.FileSystem, error) {
		l, err := fs.Get(ctx, "file:///", env)
		if err != nil {
			return nil, err
		}
		return tokenFS{FileSystem: l, renewers: &renewers}, nil
	})
	c := conf.New()
	c.Set("hadoop.security.authentication", "kerberos")
	c.Set("fs.defaultFS", "tokfs://nn:1")
	c.Set("mapreduce.jobtracker.kerberos.principal", "jt/jthost@EXAMPLE.COM")
	c.Set("hadoop.security.auth_to_local", "RULE:[2:$1@$0](jt@EXAMPLE.COM)s/.*/mapred/ DEFAULT")
	b, err := obtainTokens(context.Background(), fs.Env{Conf: c}, c, "jthost:9001")
	if err != nil || b == nil {
		t.Fatalf("obtain: %v", err)
	}
	if !slices.Equal(renewers, []string{"mapred"}) {
		t.Fatalf("renewers %v, want mapred", renewers)
	}
}

// A token the process holds for a file system (a task's token file) is
// shipped instead of asking the file system for another, as Hadoop's
// TokenCache does for a job submitted from a task.
func TestObtainTokensReusesHeld(t *testing.T) {
	held := delegation.Token{Identifier: []byte("held"), Password: []byte("pw"), Kind: delegation.Kind, Service: "127.0.0.1:8020"}
	if err := ipc.SetTokens([]delegation.Token{held}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ipc.SetTokens(nil, nil) })
	c := conf.New()
	c.Set("hadoop.security.authentication", "kerberos")
	c.Set("fs.defaultFS", "hdfs://127.0.0.1:8020") // nothing listens: it must not be asked
	c.Set("mapreduce.jobtracker.kerberos.principal", "jt/jthost@EXAMPLE.COM")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := obtainTokens(ctx, fs.Env{Conf: c}, c, "jthost:9001")
	if err != nil {
		t.Fatal(err)
	}
	got, err := delegation.ReadCredentials(b)
	if err != nil || len(got) != 1 || string(got[0].Token.Identifier) != "held" {
		t.Fatalf("shipped %v, %v", got, err)
	}
}
