package conf

import (
	"strings"
	"testing"
	"time"
)

func TestReader(t *testing.T) {
	c := New()
	c.Set("dfs.replication", "x")
	c.Set("dfs.heartbeat.interval", "5")
	r := NewReader(c, "datanode")
	if n := r.Int("dfs.replication"); n != 0 {
		t.Errorf("a bad value read as %d, want 0", n)
	}
	if d := r.Duration("dfs.heartbeat.interval", time.Second); d != 5*time.Second {
		t.Errorf("duration %v", d)
	}
	if b := r.Bytes("dfs.blocksize"); b != 128<<20 {
		t.Errorf("default block size %d", b)
	}
	err := r.Err()
	if err == nil || !strings.HasPrefix(err.Error(), "datanode: ") || !strings.Contains(err.Error(), "dfs.replication") {
		t.Fatalf("Err() = %v, want the bad key with the prefix", err)
	}
	if NewReader(c, "").Err() != nil {
		t.Error("a fresh Reader has an error")
	}
}
