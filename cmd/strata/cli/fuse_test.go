package cli

import (
	"testing"
	"time"

	"github.com/stratafs/strata/internal/fusefs"
)

func TestParseFuseOptions(t *testing.T) {
	var o fusefs.Options
	if err := parseFuseOptions("ro,,allow_other,direct_io,user=alice,attr_timeout=0.5,entry_timeout=0,readahead=8m,max_write=512k,fsname=x", &o); err != nil {
		t.Fatal(err)
	}
	want := fusefs.Options{ReadOnly: true, AllowOther: true, DirectIO: true, User: "alice", AttrTimeout: 500 * time.Millisecond,
		EntryTimeout: -1, ReadAhead: 8 << 20, MaxWrite: 512 << 10, FsName: "x"}
	if o != want {
		t.Errorf("got %+v\nwant %+v", o, want)
	}
	for _, bad := range []string{"nonsense", "user", "readahead=", "readahead=-1m", "attr_timeout=soon", "max_write=1q"} {
		if err := parseFuseOptions(bad, &fusefs.Options{}); err == nil {
			t.Errorf("-o %s: no error", bad)
		}
	}
}
