package nameservice

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
)

func haConf() *conf.Configuration {
	c := conf.New()
	c.Set("dfs.nameservices", "ns1")
	c.Set("dfs.ha.namenodes.ns1", "nn1, nn2,nn3")
	c.Set("dfs.namenode.rpc-address.ns1.nn1", "10.0.0.1:8020")
	c.Set("dfs.namenode.rpc-address.ns1.nn2", "10.0.0.2:8020")
	c.Set("dfs.namenode.rpc-address.ns1.nn3", "10.0.0.3:8020")
	c.Set("dfs.namenode.http-address.ns1.nn2", "10.0.0.2:9870")
	return c
}

func TestResolve(t *testing.T) {
	c := haConf()
	for _, tc := range []struct {
		auth string
		want []string
	}{
		{"ns1", []string{"10.0.0.1:8020", "10.0.0.2:8020", "10.0.0.3:8020"}},
		{"host", []string{"host:8020"}},
		{"host:9000", []string{"host:9000"}},
		{"ns2", []string{"ns2:8020"}},
	} {
		got, err := Resolve(c, tc.auth)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Resolve(%q) = %v, %v; want %v", tc.auth, got, err, tc.want)
		}
	}
	if _, err := Resolve(c, ""); err == nil {
		t.Error("Resolve of an empty authority succeeded")
	}
}

func TestLookupErrors(t *testing.T) {
	for name, mod := range map[string]func(c *conf.Configuration){
		"missing rpc address": func(c *conf.Configuration) { c.Unset("dfs.namenode.rpc-address.ns1.nn3") },
		"bad rpc address":     func(c *conf.Configuration) { c.Set("dfs.namenode.rpc-address.ns1.nn3", "nohostport") },
		"duplicate id":        func(c *conf.Configuration) { c.Set("dfs.ha.namenodes.ns1", "nn1,nn1") },
		"too many":            func(c *conf.Configuration) { c.Set("dfs.ha.namenodes.ns1", strings.Repeat("x,", 8)+"y") },
	} {
		c := haConf()
		mod(c)
		if _, ok, err := Lookup(c, "ns1"); err == nil || !ok {
			t.Errorf("%s: Lookup = ok %v err %v; want an error", name, ok, err)
		}
	}
	ns, ok, err := Lookup(haConf(), "ns1")
	if err != nil || !ok || len(ns.NameNodes) != 3 || ns.NameNodes[1].HTTPAddr != "10.0.0.2:9870" {
		t.Fatalf("Lookup = %+v %v %v", ns, ok, err)
	}
}

func TestSelf(t *testing.T) {
	c := haConf()
	local := func(h string) bool { return h == "10.0.0.2" }
	self, ns, ok, err := Self(c, "", local)
	if err != nil || !ok || self.ID != "nn2" || ns.ID != "ns1" {
		t.Fatalf("Self by address = %+v %v %v", self, ok, err)
	}
	c.Set("dfs.ha.namenode.id", "nn3")
	if self, _, _, err = Self(c, "", local); err != nil || self.ID != "nn3" {
		t.Fatalf("Self by id = %+v %v", self, err)
	}
	c.Set("dfs.ha.namenode.id", "nn9")
	if _, _, _, err = Self(c, "", local); err == nil {
		t.Fatal("Self accepted an id outside the nameservice")
	}
	c.Unset("dfs.ha.namenode.id")
	if _, _, _, err = Self(c, "", func(string) bool { return true }); err == nil {
		t.Fatal("Self accepted three local members without dfs.ha.namenode.id")
	}
	if _, _, ok, err := Self(conf.New(), "", local); ok || err != nil {
		t.Fatalf("Self without HA = ok %v err %v", ok, err)
	}
}
