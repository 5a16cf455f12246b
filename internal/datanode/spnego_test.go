package datanode_test

import (
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/datanode"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/httpauth/spnegotest"
	"github.com/stratafs/strata/internal/storage"
)

// TestSPNEGODataNodePages: with hadoop.http.authentication.type=kerberos
// the DataNode's pages, /jmx and /status need SPNEGO (curl --negotiate
// after kinit); its WebHDFS keeps the NameNode's redirect token instead,
// so a request without a ticket reaches it and is refused by the token
// check, not by a Negotiate challenge.
func TestSPNEGODataNodePages(t *testing.T) {
	realm := spnegotest.Start(t)
	dn, err := datanode.New(datanode.Config{
		Volumes:       []fsdataset.VolumeConfig{{Path: filepath.Join(t.TempDir(), "v"), Type: storage.Disk}},
		NameNodeAddrs: []string{"127.0.0.1:1"}, XferAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0",
		HeartbeatInterval: time.Second, HTTPAuth: realm.Config(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := dn.Start(); err != nil {
		dn.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { dn.Close() })
	for _, p := range []string{"/", "/datanode.html", "/jmx", "/status"} {
		if code, hdr, _ := realm.Curl(t, "", spnegotest.URL(dn.HTTPAddr(), p)); code != 401 || !strings.Contains(strings.ToLower(hdr), "www-authenticate: negotiate") {
			t.Errorf("%s without a ticket: %d", p, code)
		}
		if code, _, body := realm.Curl(t, realm.CCache, spnegotest.URL(dn.HTTPAddr(), p)); code != 200 {
			t.Errorf("%s after kinit: %d %.200s", p, code, body)
		}
	}
	code, hdr, body := realm.Curl(t, "", spnegotest.URL(dn.HTTPAddr(), "/webhdfs/v1/f?op=OPEN&namenoderpcaddress=127.0.0.1:1"))
	if code == 401 || strings.Contains(strings.ToLower(hdr), "negotiate") {
		t.Errorf("DataNode WebHDFS challenged for SPNEGO: %d %s", code, body)
	}
}
