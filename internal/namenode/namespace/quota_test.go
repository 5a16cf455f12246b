package namespace

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/storage"
)

const mb = 1 << 20

// quotaHistory sets quotas and then changes the subtrees under them with
// every kind of edit that moves usage.
func quotaHistory() []Edit {
	b := func(i int) uint64 { return blockmgmt.FirstBlockID + uint64(i) }
	fp := Perm{Owner: "alice", Group: "staff", Mode: 0o644}
	return []Edit{
		Mkdir(16386, "/q", perm, 1),
		Mkdir(16387, "/q/sub", perm, 1),
		Mkdir(16388, "/other", perm, 1),
		SetQuota("/q", 100, 1000*mb, 0),
		SetQuota("/q", 0, 500*mb, storage.SSD),
		SetQuota("/q/sub", 10, NoQuota, 0),
		AddFile(NewFile{ID: 16389, Path: "/q/sub/f", Perm: fp, Mtime: 2, Replication: 3, BlockSize: mb, ClientName: "c"}),
		AddBlock("/q/sub/f", BlockInfo{ID: b(0), GenStamp: 1}, 0),
		AddBlock("/q/sub/f", BlockInfo{ID: b(1), GenStamp: 2}, mb),
		CloseFile("/q/sub/f", 3, 3, []BlockInfo{{b(0), 1, mb}, {b(1), 2, 100}}),
		SetReplication("/q/sub/f", 2),
		SetStoragePolicy("/q/sub", storage.OneSSDID),
		AddFile(NewFile{ID: 16390, Path: "/q/g", Perm: fp, Mtime: 4, Replication: 1, BlockSize: mb, ClientName: "c"}),
		AddBlock("/q/g", BlockInfo{ID: b(2), GenStamp: 3}, 0),
		CloseFile("/q/g", 5, 5, []BlockInfo{{b(2), 3, 10}}),
		ReopenFile("/q/g", "c2", "", 6), // append: the partial block is charged in full again
		AddFile(NewFile{ID: 16391, Path: "/other/h", Perm: fp, Mtime: 7, Replication: 2, BlockSize: mb, ClientName: "c"}),
		AddBlock("/other/h", BlockInfo{ID: b(3), GenStamp: 4}, 0),
		CloseFile("/other/h", 8, 8, []BlockInfo{{b(3), 4, 50}}),
		Rename("/other/h", "/q/sub/h", 9, false), // into both quota directories
		Concat("/q/sub/f", []string{"/q/sub/h"}, 10),
		Mkdir(16392, "/q/sub/d", perm, 11),
		Rename("/q/sub/d", "/other/d", 12, false), // out of them
		UpdateBlocks("/q/sub/f", []BlockInfo{{b(0), 1, mb}}, false),
		Delete("/q/g", 13),
	}
}

func TestQuotaUsageIncrementalEqualsRecount(t *testing.T) {
	edits := quotaHistory()
	tr := newTree()
	for i, e := range edits {
		if err := tr.Apply(e); err != nil {
			t.Fatalf("edit %d: %v", i, err)
		}
		if err := tr.VerifyQuotas(); err != nil {
			t.Fatalf("after edit %d: %v", i, err)
		}
	}
	q := tr.Lookup("/q").Quota()
	// /q, /q/sub, /q/sub/f: three inodes; f is one 1 MiB block at
	// replication 2 under ONE_SSD (one SSD replica, one DISK).
	if q.Used.NS != 3 || q.Used.Space != 2*mb || q.Used.Types[storage.SSD] != mb || q.Used.Types[storage.Disk] != mb {
		t.Errorf("usage of /q = %+v", q.Used)
	}
	if q.NS != 100 || q.Space != 1000*mb || q.TypeQuota(storage.SSD) != 500*mb || q.TypeQuota(storage.Disk) != NoQuota {
		t.Errorf("quotas of /q = %+v", q)
	}

	// The image carries the quotas, and its loader recounts the usage.
	var img bytes.Buffer
	if err := tr.WriteImage(&img); err != nil {
		t.Fatal(err)
	}
	loaded, err := ReadImage(&img, blockmgmt.NewBlockMap())
	if err != nil {
		t.Fatal(err)
	}
	if got := loaded.Lookup("/q").Quota(); *got != *q {
		t.Errorf("loaded quota %+v, want %+v", got, q)
	}
	// A replay of the records from an empty tree keeps the same usage.
	replayed := newTree()
	for _, e := range edits {
		rec, _ := e.Marshal()
		if err := replayed.ApplyRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	if got := replayed.Lookup("/q/sub").Quota(); *got != *tr.Lookup("/q/sub").Quota() {
		t.Errorf("replayed /q/sub quota %+v, want %+v", got, tr.Lookup("/q/sub").Quota())
	}
}

func TestQuotaChargesOpenBlocksInFull(t *testing.T) {
	tr := newTree()
	apply(t, tr, []Edit{
		Mkdir(16386, "/q", perm, 1),
		SetQuota("/q", NoQuota, 10*mb, 0),
		AddFile(NewFile{ID: 16387, Path: "/q/f", Perm: perm, Mtime: 2, Replication: 3, BlockSize: 4 * mb, ClientName: "c"}),
		AddBlock("/q/f", BlockInfo{ID: blockmgmt.FirstBlockID, GenStamp: 1}, 0),
	})
	q := tr.Lookup("/q").Quota()
	if q.Used.Space != 12*mb {
		t.Fatalf("an open block is charged %d, want the full 12 MiB", q.Used.Space)
	}
	apply(t, tr, []Edit{CloseFile("/q/f", 3, 3, []BlockInfo{{blockmgmt.FirstBlockID, 1, mb}})})
	if q.Used.Space != 3*mb {
		t.Fatalf("closing corrects the charge to %d, want 3 MiB", q.Used.Space)
	}
	// Clearing every quota drops the feature; setting one again recounts.
	apply(t, tr, []Edit{SetQuota("/q", NoQuota, NoQuota, 0)})
	if tr.Lookup("/q").Quota() != nil {
		t.Fatal("quota kept after clearing both")
	}
	apply(t, tr, []Edit{SetQuota("/q", 5, NoQuota, 0)})
	if u := tr.Lookup("/q").Quota().Used; u.NS != 2 || u.Space != 3*mb {
		t.Fatalf("recounted usage %+v", u)
	}
}

func TestCheckQuota(t *testing.T) {
	tr := newTree()
	apply(t, tr, []Edit{
		Mkdir(16386, "/q", perm, 1),
		Mkdir(16387, "/q/d", perm, 1),
		SetQuota("/q", 2, 3*mb, 0),
		SetQuota("/q/d", NoQuota, NoQuota, 0),
		SetQuota("/q", 0, mb, storage.Disk),
	})
	d := tr.Lookup("/q/d")
	var qe *QuotaExceededError
	err := tr.CheckQuota(d, Usage{NS: 1})
	if !errors.As(err, &qe) || qe.Kind != NSQuota ||
		err.Error() != "The NameSpace quota (directories and files) of directory /q is exceeded: quota=2 file count=3" {
		t.Errorf("ns: %v", err)
	}
	err = tr.CheckQuota(d, Usage{Space: 4 * mb})
	if !errors.As(err, &qe) || qe.Kind != DSQuota ||
		err.Error() != "The DiskSpace quota of /q is exceeded: quota = 3145728 B = 3 MB but diskspace consumed = 4194304 B = 4 MB" {
		t.Errorf("ds: %v", err)
	}
	var u Usage
	u.Space = mb
	u.Types[storage.Disk] = mb + mb/2
	err = tr.CheckQuota(d, u)
	if !errors.As(err, &qe) || qe.Kind != TypeQuota ||
		err.Error() != "Quota by storage type : DISK on path : /q is exceeded. quota = 1 MB but space consumed = 1.50 MB" {
		t.Errorf("type: %v", err)
	}
	// Shrinking is allowed over quota; so is a rename under a common ancestor.
	if err := tr.CheckQuota(d, Usage{NS: -1, Space: -mb}); err != nil {
		t.Errorf("shrink: %v", err)
	}
	if err := tr.CheckQuotaBelow(d, tr.Lookup("/q"), Usage{NS: 5}); err != nil {
		t.Errorf("below the common ancestor: %v", err)
	}
}

func TestLong2String(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KB", 1536: "1.50 KB", 3 << 20: "3 MB", 1<<30 - 1: "1.00 GB", 5 << 40: "5 TB", -2048: "-2 KB"} {
		if got := Long2String(n, "B", 2); got != want {
			t.Errorf("Long2String(%d) = %q, want %q", n, got, want)
		}
	}
	if got := Long2String(1536, "", 1); got != "1.5 K" {
		t.Errorf("no unit: %q", got)
	}
}

// TestQuotaInheritedPolicyChange: setting a policy above a quota
// directory, or moving it under another policy, changes its per-type
// usage.
func TestQuotaInheritedPolicyChange(t *testing.T) {
	tr := newTree()
	fp := Perm{Owner: "alice", Group: "staff", Mode: 0o644}
	apply(t, tr, []Edit{
		Mkdir(16386, "/p", perm, 1),
		Mkdir(16387, "/p/d", perm, 1),
		Mkdir(16388, "/cold", perm, 1),
		SetStoragePolicy("/cold", storage.ColdID),
		SetQuota("/p/d", 0, 100*mb, storage.SSD),
		AddFile(NewFile{ID: 16389, Path: "/p/d/f", Perm: fp, Mtime: 2, Replication: 2, BlockSize: mb, ClientName: "c"}),
		AddBlock("/p/d/f", BlockInfo{ID: blockmgmt.FirstBlockID, GenStamp: 1}, 0),
		CloseFile("/p/d/f", 3, 3, []BlockInfo{{blockmgmt.FirstBlockID, 1, 1000}}),
	})
	q := tr.Lookup("/p/d").Quota()
	if q.Used.Types[storage.SSD] != 0 || q.Used.Types[storage.Disk] != 2000 {
		t.Fatalf("HOT usage %+v", q.Used)
	}
	apply(t, tr, []Edit{SetStoragePolicy("/p", storage.AllSSDID)})
	if q.Used.Types[storage.SSD] != 2000 || q.Used.Types[storage.Disk] != 0 {
		t.Fatalf("after ALL_SSD above: %+v", q.Used)
	}
	apply(t, tr, []Edit{Rename("/p/d", "/cold/d", 4, false)})
	if q.Used.Types[storage.Archive] != 2000 || q.Used.Types[storage.SSD] != 0 {
		t.Fatalf("after moving under COLD: %+v", q.Used)
	}
	if err := tr.VerifyQuotas(); err != nil {
		t.Fatal(err)
	}
}
