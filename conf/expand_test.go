package conf

import (
	"strconv"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	t.Setenv("STRATA_TEST_HOME", "/home/t")
	t.Setenv("STRATA_TEST_EMPTY", "")
	u := userName()
	c := New()
	set := map[string]string{
		"hadoop.tmp.dir": "/data/tmp",
		"a":              "${b}",
		"b":              "${a}",
		"self":           "x${self}y",
		"chain0":         "end",
		"deep":           "${env.STRATA_TEST_HOME}/${hadoop.tmp.dir}",
		"old.ref":        "${fs.default.name}",
		"twice":          "${c1}${c1}",
		"c1":             "${c2}${c2}",
		"c2":             "ab",
		"uses.cycle":     "<${a}>",
	}
	for i := 1; i <= 30; i++ {
		set["chain"+strconv.Itoa(i)] = "${chain" + strconv.Itoa(i-1) + "}"
	}
	for k, v := range set {
		c.Set(k, v)
	}
	c.Set("fs.defaultFS", "hdfs://nn")
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"${hadoop.tmp.dir}/x", "/data/tmp/x"},
		{"${dfs.replication}", "3"}, // defaults resolve
		{"${env.STRATA_TEST_HOME}/.conf", "/home/t/.conf"},
		{"${env.STRATA_TEST_UNSET_XYZ}", "${env.STRATA_TEST_UNSET_XYZ}"},
		{"${env.STRATA_TEST_UNSET_XYZ:-dflt}", "dflt"},
		{"${env.STRATA_TEST_EMPTY:-dflt}", "dflt"},
		{"${env.STRATA_TEST_EMPTY-dflt}", ""},
		{"${env.STRATA_TEST_UNSET_XYZ-dflt}", "dflt"},
		{"${env.STRATA_TEST_HOME:-dflt}", "/home/t"},
		{"${env.}", "${env.}"},
		{"${user.name}", u},
		{"${no.such.key}/x", "${no.such.key}/x"},
		{"${no.such.key}${hadoop.tmp.dir}", "${no.such.key}/data/tmp"},
		{"${a}", "${a}"}, // a -> b -> a: the cycle stays literal
		{"${self}", "x${self}y"},
		{"${uses.cycle}", "<${a}>"},
		{"${deep}", "/home/t//data/tmp"},
		{"${old.ref}", "hdfs://nn"},
		{"${fs.default.name}", "hdfs://nn"},
		{"${twice}", "abababab"},
		{"${chain19}", "end"},       // 20 levels: resolved
		{"${chain25}", "${chain5}"}, // deeper: the rest stays literal
		{"$", "$"},
		{"${", "${"},
		{"${}", "${}"},
		{"${a b}", "${a b}"},
		{"$${hadoop.tmp.dir}", "$/data/tmp"},
		{"${${hadoop.tmp.dir}}", "${/data/tmp}"},
		{"${hadoop.tmp.dir", "${hadoop.tmp.dir"},
		{"{hadoop.tmp.dir}", "{hadoop.tmp.dir}"},
		{"${hadoop.tmp.dir}${hadoop.tmp.dir}", "/data/tmp/data/tmp"},
	}
	for _, tt := range tests {
		if got := c.Expand(tt.in); got != tt.want {
			t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// Get: the key itself counts as being expanded.
	if got := c.Get("a"); got != "${a}" {
		t.Errorf("Get(a) = %q", got)
	}
	if got := c.Get("self"); got != "x${self}y" {
		t.Errorf("Get(self) = %q", got)
	}
	if got := c.GetRaw("deep"); got != set["deep"] {
		t.Errorf("GetRaw = %q", got)
	}
	if got := c.Get("dfs.namenode.name.dir"); got != "file:///data/tmp/dfs/name" {
		t.Errorf("name dir = %q", got)
	}
}

// TestExpandBudget checks that mutually referring values cannot blow up.
func TestExpandBudget(t *testing.T) {
	c := New()
	for i := 0; i < 20; i++ {
		c.Set("x"+strconv.Itoa(i), strings.Repeat("${x"+strconv.Itoa(i+1)+"}", 10))
	}
	c.Set("x20", "y")
	got := c.Get("x0")
	// Each expansion adds at most one value (< 70 bytes here).
	if len(got) > 70*(maxExpansions+1) {
		t.Fatalf("expansion grew to %d bytes", len(got))
	}
	if !strings.Contains(got, "${") {
		t.Fatal("budget was not hit")
	}
}
