// Package conftest checks a daemon's configuration mapping against conf's
// table of known keys, so that each daemon's defaults live in one place
// (the table) and every key its ConfigFrom reads is known and used.
//
// A daemon's test calls both checks:
//
//	conftest.CheckDefaults(t, namenode.ConfigFrom, base, namenode.DefaultConfig())
//	conftest.CheckMapping(t, namenode.ConfigFrom, base, map[string]string{
//		"dfs.replication": "2",
//		...
//	})
package conftest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
)

// CheckDefaults checks that from(base()) returns want without error: the
// Config a daemon builds from an otherwise empty configuration is its
// DefaultConfig, so the defaults in conf's table and DefaultConfig cannot
// drift apart. base may set the keys a daemon requires (a storage
// directory, say); nil means conf.New.
func CheckDefaults[T any](t testing.TB, from func(*conf.Configuration) (T, error), base func() *conf.Configuration, want T) {
	t.Helper()
	if base == nil {
		base = conf.New
	}
	got, err := from(base())
	if err != nil {
		t.Fatalf("ConfigFrom(defaults): %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ConfigFrom(defaults) differs from DefaultConfig:\n%s", diff(reflect.ValueOf(got), reflect.ValueOf(want), ""))
	}
}

// CheckMapping checks that from reads only known keys, that alt names a
// value for every key it reads, and that setting each key in alt to its
// value (on top of base) changes the Config from returns: every key read
// reaches a field. alt's values must be valid and differ from the default.
// A key in alt that from never reads is an error too (a stale table).
func CheckMapping[T any](t testing.TB, from func(*conf.Configuration) (T, error), base func() *conf.Configuration, alt map[string]string) {
	t.Helper()
	if base == nil {
		base = conf.New
	}
	c := base()
	ref, err := from(c)
	if err != nil {
		t.Fatalf("ConfigFrom(base): %v", err)
	}
	read := c.Read()
	for _, k := range read {
		if _, ok := conf.LookupKey(k); !ok {
			t.Errorf("ConfigFrom reads %q, which is not in conf's known keys", k)
		}
		if _, ok := alt[k]; !ok {
			t.Errorf("ConfigFrom reads %q but the test gives no other value for it", k)
		}
	}
	for k, v := range alt {
		if !slices.Contains(read, k) {
			t.Errorf("the test gives a value for %q, which ConfigFrom does not read", k)
			continue
		}
		c := base()
		c.Set(k, v)
		got, err := from(c)
		if err != nil {
			t.Errorf("ConfigFrom with %s=%q: %v", k, v, err)
			continue
		}
		if reflect.DeepEqual(got, ref) {
			t.Errorf("setting %s=%q changes nothing in the Config", k, v)
		}
	}
}

// diff lists the fields where a and b differ, by path.
func diff(a, b reflect.Value, path string) string {
	if a.Kind() == reflect.Struct && a.Type() == b.Type() {
		var out []string
		for i := range a.NumField() {
			f := a.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if d := diff(a.Field(i), b.Field(i), path+"."+f.Name); d != "" {
				out = append(out, d)
			}
		}
		return strings.Join(out, "\n")
	}
	if !a.CanInterface() || reflect.DeepEqual(a.Interface(), b.Interface()) {
		return ""
	}
	return fmt.Sprintf("  %s: got %v, want %v", strings.TrimPrefix(path, "."), a.Interface(), b.Interface())
}
