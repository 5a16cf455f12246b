package namespace

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/storage"
)

// watchedTree is a tree whose block map has a Manager, its first full
// pass done, so that Queued counts what edits queue.
type watchedTree struct {
	*Tree
	m      *blockmgmt.Manager
	nextID uint64
	nextB  uint64
}

func newWatchedTree(t *testing.T) *watchedTree {
	tr := newTree()
	m := blockmgmt.New(blockmgmt.Config{MinReplication: 1, MaxReplicationStreams: 2, ReplicationTimeout: time.Minute, SafeModeThreshold: 0.999},
		tr.Blocks, blockmgmt.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return &watchedTree{Tree: tr, m: m, nextID: 16386, nextB: blockmgmt.FirstBlockID}
}

// settle runs a replication pass: the blocks (empty, with no replicas)
// need nothing, so the queue is empty after it.
func (w *watchedTree) settle(t *testing.T) {
	t.Helper()
	w.m.Replicate(time.Unix(0, 0))
	if q := w.m.Queued(); q != 0 {
		t.Fatalf("%d blocks queued after a pass", q)
	}
}

func (w *watchedTree) mkdir(t *testing.T, path string) {
	t.Helper()
	apply(t, w.Tree, []Edit{Mkdir(w.nextID, path, perm, 1)})
	w.nextID++
}

// file adds a closed file at path with n empty blocks.
func (w *watchedTree) file(t *testing.T, path string, n int) {
	t.Helper()
	var bs []BlockInfo
	for range n {
		bs = append(bs, BlockInfo{ID: w.nextB, GenStamp: 1001})
		w.nextB++
	}
	apply(t, w.Tree, []Edit{
		AddFile(NewFile{ID: w.nextID, Path: path, Perm: perm, Mtime: 1, Replication: 1, BlockSize: 1 << 20, ClientName: "c"}),
		CloseFile(path, 2, 2, bs),
	})
	w.nextID++
}

// TestStoragePolicyQueuesOnlyWhatItReaches: setting a directory's storage
// policy queues the blocks of the files it governs, not those below a
// directory or file with a policy of its own; past blocksChangedMax it
// asks for one pass over every block instead of listing them.
func TestStoragePolicyQueuesOnlyWhatItReaches(t *testing.T) {
	w := newWatchedTree(t)
	w.mkdir(t, "/d")
	w.mkdir(t, "/d/sub")
	w.mkdir(t, "/d/own")
	w.file(t, "/d/a", 2)
	w.file(t, "/d/sub/b", 3)
	w.file(t, "/d/own/c", 4)
	w.file(t, "/d/ownfile", 5)
	w.file(t, "/other", 6)
	apply(t, w.Tree, []Edit{SetStoragePolicy("/d/own", storage.AllSSDID), SetStoragePolicy("/d/ownfile", storage.AllSSDID)})
	w.settle(t)

	apply(t, w.Tree, []Edit{SetStoragePolicy("/d", storage.ColdID)})
	if q := w.m.Queued(); q != 2+3 {
		t.Errorf("%d blocks queued by the policy on /d, want 5 (/d/a's and /d/sub/b's)", q)
	}
	w.settle(t)

	defer func(old int) { blocksChangedMax = old }(blocksChangedMax)
	blocksChangedMax = 4
	apply(t, w.Tree, []Edit{SetStoragePolicy("/d", storage.HotID)})
	if q, all := w.m.Queued(), w.Blocks.Len(); q != all {
		t.Errorf("%d blocks queued past the listing bound, want all %d", q, all)
	}
}

// TestAddBlockQueuesOnlyNewBlocks: a block added to a file being written
// queues that block and the one it commits, not the file's earlier
// blocks.
func TestAddBlockQueuesOnlyNewBlocks(t *testing.T) {
	w := newWatchedTree(t)
	apply(t, w.Tree, []Edit{AddFile(NewFile{ID: 16386, Path: "/f", Perm: perm, Mtime: 1, Replication: 1, BlockSize: 1 << 20, ClientName: "c"})})
	for i := range 5 {
		apply(t, w.Tree, []Edit{AddBlock("/f", BlockInfo{ID: blockmgmt.FirstBlockID + uint64(i), GenStamp: 1001}, 0)})
	}
	w.settle(t)
	apply(t, w.Tree, []Edit{AddBlock("/f", BlockInfo{ID: blockmgmt.FirstBlockID + 5, GenStamp: 1001}, 0)})
	if q := w.m.Queued(); q != 2 {
		t.Errorf("%d blocks queued by an added block, want 2 (it and the one it commits)", q)
	}
}
