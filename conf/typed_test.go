package conf

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestGetInt(t *testing.T) {
	tests := []struct {
		val     string
		want    int64
		wantErr string // substring of the error; "" for none
	}{
		{"3", 3, ""},
		{" 42\n", 42, ""},
		{"-7", -7, ""},
		{"+7", 7, ""},
		{"0x1F", 31, ""},
		{"-0x10", -16, ""},
		{"9223372036854775807", math.MaxInt64, ""},
		{"-9223372036854775808", math.MinInt64, ""},
		{"9223372036854775808", 0, "out of range"},
		{"", 0, "empty value"},
		{"three", 0, `invalid integer "three": not an integer`},
		{"1.5", 0, "not an integer"},
		{"1_000", 0, "not an integer"},
		{"--1", 0, "not an integer"},
		{"0x", 0, "not an integer"},
		{"12k", 0, "not an integer"},
	}
	for _, tt := range tests {
		c := New()
		c.Set("dfs.replication", tt.val)
		got, err := c.GetInt("dfs.replication")
		check(t, "GetInt", tt.val, got, tt.want, err, tt.wantErr)
	}
	if _, err := New().GetInt("no.such.key"); !errors.Is(err, ErrEmpty) {
		t.Errorf("GetInt(unset) error = %v, want ErrEmpty", err)
	}
	n, err := New().GetInt("dfs.replication")
	if err != nil || n != 3 {
		t.Errorf("GetInt(default) = %d, %v", n, err)
	}
}

func check[T comparable](t *testing.T, fn, val string, got, want T, err error, wantErr string) {
	t.Helper()
	if wantErr == "" {
		if err != nil || got != want {
			t.Errorf("%s(%q) = %v, %v; want %v", fn, val, got, err, want)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), wantErr) {
		t.Errorf("%s(%q) error = %v, want one containing %q", fn, val, err, wantErr)
	}
	var ve *ValueError
	if !errors.As(err, &ve) {
		t.Errorf("%s(%q) error %T is not a *ValueError", fn, val, err)
	} else if !strings.HasPrefix(err.Error(), "conf: "+ve.Key+": invalid ") || !strings.Contains(err.Error(), "\""+val) && val != "" {
		t.Errorf("%s(%q) error %q does not name key and value", fn, val, err)
	}
}

func TestGetFloat(t *testing.T) {
	tests := []struct {
		val     string
		want    float64
		wantErr string
	}{
		{"0.999f", 0.999, ""},
		{"0.80", 0.8, ""},
		{"1", 1, ""},
		{"1.", 1, ""},
		{" .5 ", 0.5, ""},
		{"2.5D", 2.5, ""},
		{"1e3", 1000, ""},
		{"-0.25", -0.25, ""},
		{"f", 0, "not a number"},
		{"0.5ff", 0, "not a number"},
		{"NaN", 0, "not a number"},
		{"Infinity", 0, "not a number"},
		{"inf", 0, "not a number"},
		{"0x1p-2", 0, "not a number"},
		{"1_0", 0, "not a number"},
		{"1e999", 0, "out of range"},
		{"", 0, "empty value"},
		{"half", 0, `invalid number "half"`},
	}
	for _, tt := range tests {
		c := New()
		c.Set("dfs.namenode.safemode.threshold-pct", tt.val)
		got, err := c.GetFloat("dfs.namenode.safemode.threshold-pct")
		check(t, "GetFloat", tt.val, got, tt.want, err, tt.wantErr)
	}
	if f, err := New().GetFloat("dfs.namenode.safemode.threshold-pct"); err != nil || float32(f) != 0.999 {
		t.Errorf("default threshold = %v, %v", f, err)
	}
}

func TestGetBool(t *testing.T) {
	tests := []struct {
		val     string
		want    bool
		wantErr string
	}{
		{"true", true, ""},
		{"TRUE", true, ""},
		{" False ", false, ""},
		{"yes", false, `invalid boolean "yes": want "true" or "false"`},
		{"1", false, "want"},
		{"", false, "empty value"},
	}
	for _, tt := range tests {
		c := New()
		c.Set("dfs.permissions.enabled", tt.val)
		got, err := c.GetBool("dfs.permissions.enabled")
		check(t, "GetBool", tt.val, got, tt.want, err, tt.wantErr)
	}
}

func TestGetBytes(t *testing.T) {
	tests := []struct {
		val     string
		want    int64
		wantErr string
	}{
		{"134217728", 134217728, ""},
		{"128m", 128 << 20, ""},
		{"128M", 128 << 20, ""},
		{"1k", 1024, ""},
		{"1g", 1 << 30, ""},
		{"2T", 2 << 40, ""},
		{"3p", 3 << 50, ""},
		{"7e", 7 << 60, ""},
		{"8e", 0, "out of range"},
		{"-1k", -1024, ""},
		{" 64m ", 64 << 20, ""},
		{"0k", 0, ""},
		{"128mb", 0, `invalid size suffix "b"`},
		{"12x", 0, `invalid size "12x": invalid size suffix "x"; allowed: k, m, g, t, p, e`},
		{"1.5g", 0, "not an integer"},
		{"m", 0, "not an integer"},
		{"0x10", 0, "not an integer"},
		{"", 0, "empty value"},
		{"99999999999999999999", 0, "out of range"},
	}
	for _, tt := range tests {
		c := New()
		c.Set("dfs.blocksize", tt.val)
		got, err := c.GetBytes("dfs.blocksize")
		check(t, "GetBytes", tt.val, got, tt.want, err, tt.wantErr)
	}
}

func TestGetDuration(t *testing.T) {
	tests := []struct {
		val     string
		unit    time.Duration
		want    time.Duration
		wantErr string
	}{
		{"30000", time.Millisecond, 30 * time.Second, ""},
		{"3", time.Second, 3 * time.Second, ""},
		{"3600s", time.Millisecond, time.Hour, ""},
		{"500ms", time.Second, 500 * time.Millisecond, ""},
		{"500MS", time.Second, 500 * time.Millisecond, ""},
		{"10ns", time.Second, 10, ""},
		{"10us", time.Second, 10 * time.Microsecond, ""},
		{"5m", time.Second, 5 * time.Minute, ""},
		{"2h", time.Second, 2 * time.Hour, ""},
		{"1d", time.Second, 24 * time.Hour, ""},
		{" 7s ", time.Second, 7 * time.Second, ""},
		{"-1", time.Second, -time.Second, ""},
		{"0", time.Hour, 0, ""},
		{"1.5s", time.Second, 0, "not an integer"},
		{"1m30s", time.Second, 0, "not an integer"},
		{"10x", time.Second, 0, `invalid duration "10x": invalid duration unit`},
		{"s", time.Second, 0, "not an integer"},
		{"", time.Second, 0, "empty value"},
		{"200000d", time.Second, 0, "out of range"},
		{"3", 0, 0, "default unit"},
	}
	for _, tt := range tests {
		c := New()
		c.Set("dfs.heartbeat.interval", tt.val)
		got, err := c.GetDuration("dfs.heartbeat.interval", tt.unit)
		check(t, "GetDuration", tt.val, got, tt.want, err, tt.wantErr)
	}
	if d, err := New().GetDuration("dfs.namenode.checkpoint.period", time.Second); err != nil || d != time.Hour {
		t.Errorf("checkpoint period default = %v, %v", d, err)
	}
}

func TestGetStrings(t *testing.T) {
	tests := []struct {
		val  string
		want []string
	}{
		{"", nil},
		{" , ,", nil},
		{"a", []string{"a"}},
		{" /d1 , /d2,,/d3 ", []string{"/d1", "/d2", "/d3"}},
		{"\n  /d1,\n  /d2\n", []string{"/d1", "/d2"}},
	}
	for _, tt := range tests {
		c := New()
		c.Set("dfs.datanode.data.dir", tt.val)
		if got := c.GetStrings("dfs.datanode.data.dir"); !slices.Equal(got, tt.want) {
			t.Errorf("GetStrings(%q) = %q, want %q", tt.val, got, tt.want)
		}
	}
}

// TestTypedExpands checks that typed getters see expanded values and name
// the canonical key.
func TestTypedExpands(t *testing.T) {
	c := New()
	c.Set("strata.job.size", "64")
	c.Set("dfs.block.size", "${strata.job.size}m")
	if n, err := c.GetBytes("dfs.blocksize"); err != nil || n != 64<<20 {
		t.Errorf("GetBytes = %d, %v", n, err)
	}
	c.Set("mapred.reduce.tasks", "x${strata.job.size}")
	_, err := c.GetInt("mapred.reduce.tasks")
	if err == nil || err.Error() != `conf: mapreduce.job.reduces: invalid integer "x64": not an integer` {
		t.Errorf("error = %v", err)
	}
}

func TestParseExported(t *testing.T) {
	if n, err := ParseBytes("2k"); err != nil || n != 2048 {
		t.Errorf("ParseBytes = %d, %v", n, err)
	}
	if d, err := ParseDuration("2", time.Minute); err != nil || d != 2*time.Minute {
		t.Errorf("ParseDuration = %v, %v", d, err)
	}
	if _, err := ParseBytes(""); !errors.Is(err, ErrEmpty) {
		t.Errorf("ParseBytes(\"\") = %v", err)
	}
}
