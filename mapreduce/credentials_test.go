package mapreduce

import (
	"context"
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
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
