package datanode

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stratafs/strata/conf"
)

// TestCORSOrigins: only the NameNodes' web UI origins — scheme, host and
// port — and the configured extra origins may upload across origins; a
// NameNode configured by name matches a page reached by its address.
func TestCORSOrigins(t *testing.T) {
	d := &DataNode{cfg: Config{NameNodeAddrs: []string{"localhost:8020", "nn2.invalid:8020"},
		NameNodeHTTPAddrs: []string{"localhost:9870", "0.0.0.0:9871"}, CORSOrigins: []string{"https://gw.example:8443/"}}}
	for origin, want := range map[string]bool{
		"http://localhost:9870":      true,
		"http://LOCALHOST:9870":      true,
		"http://127.0.0.1:9870":      true, // resolved form of localhost
		"http://nn2.invalid:9871":    true, // wildcard bind: the RPC hosts
		"http://localhost:9871":      true,
		"https://gw.example:8443":    true,
		"http://127.0.0.1:50030":     false,
		"https://127.0.0.1:9870":     false,
		"https://127.0.0.1:1":        false,
		"http://localhost":           false,
		"http://nn2.invalid:8080":    false,
		"http://gw.example:8443":     false,
		"http://localhost:9870/path": false,
		"null":                       false,
	} {
		var ok bool
		h := d.cors(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodOptions, "/webhdfs/v1/f?op=CREATE", nil)
		r.Header.Set("Origin", origin)
		h.ServeHTTP(rec, r)
		ok = rec.Header().Get("Access-Control-Allow-Origin") == origin
		if ok != want {
			t.Errorf("origin %s allowed: %v, want %v", origin, ok, want)
		}
	}
}

// TestConfigNameNodeHTTPAddrs: the web UI addresses come from each HA
// member's key, else dfs.namenode.http-address; extra origins from
// strata.datanode.http.cors.allowed-origins.
func TestConfigNameNodeHTTPAddrs(t *testing.T) {
	c := conf.New()
	c.Set("dfs.namenode.http-address", "nn.example:9870")
	c.Set("strata.datanode.http.cors.allowed-origins", "https://a.example:1, http://b.example")
	cfg, err := ConfigFrom(c, "nn.example:8020")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.NameNodeHTTPAddrs) != 1 || cfg.NameNodeHTTPAddrs[0] != "nn.example:9870" || len(cfg.CORSOrigins) != 2 {
		t.Errorf("NameNodeHTTPAddrs %q, CORSOrigins %q", cfg.NameNodeHTTPAddrs, cfg.CORSOrigins)
	}
	c.Set("dfs.nameservices", "ns1")
	c.Set("dfs.ha.namenodes.ns1", "nn1,nn2")
	c.Set("dfs.namenode.rpc-address.ns1.nn1", "h1:8020")
	c.Set("dfs.namenode.rpc-address.ns1.nn2", "h2:8020")
	c.Set("dfs.namenode.http-address.ns1.nn1", "h1:9870")
	c.Set("dfs.namenode.http-address.ns1.nn2", "h2:9870")
	if cfg, err = ConfigFrom(c, "ns1"); err != nil {
		t.Fatal(err)
	}
	if len(cfg.NameNodeHTTPAddrs) != 2 || cfg.NameNodeHTTPAddrs[1] != "h2:9870" {
		t.Errorf("HA NameNodeHTTPAddrs %q", cfg.NameNodeHTTPAddrs)
	}
}
