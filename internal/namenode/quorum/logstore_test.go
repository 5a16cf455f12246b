package quorum

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func entry(i uint64) *raft.Log {
	return &raft.Log{Index: i, Term: 1 + i/10, Type: raft.LogCommand, Data: []byte(fmt.Sprintf("edit %d", i)), AppendedAt: time.Unix(0, int64(i))}
}

func storeRange(t *testing.T, s *LogStore, from, to uint64) {
	t.Helper()
	var batch []*raft.Log
	for i := from; i <= to; i++ {
		batch = append(batch, entry(i))
		if len(batch) == 7 || i == to {
			if err := s.StoreLogs(batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
}

func checkRange(t *testing.T, s *LogStore, from, to uint64) {
	t.Helper()
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	if first != from || last != to {
		t.Fatalf("range %d-%d, want %d-%d", first, last, from, to)
	}
	for i := from; i <= to && from != 0; i++ {
		var l raft.Log
		if err := s.GetLog(i, &l); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		want := entry(i)
		if l.Index != i || l.Term != want.Term || string(l.Data) != string(want.Data) || !l.AppendedAt.Equal(want.AppendedAt) || l.Type != want.Type {
			t.Fatalf("entry %d = %+v", i, l)
		}
	}
	var l raft.Log
	if err := s.GetLog(to+1, &l); err != raft.ErrLogNotFound {
		t.Fatalf("entry past the end: %v", err)
	}
	if from > 1 {
		if err := s.GetLog(from-1, &l); err != raft.ErrLogNotFound {
			t.Fatalf("entry before the start: %v", err)
		}
	}
}

func reopen(t *testing.T, s *LogStore) *LogStore {
	t.Helper()
	s.Close()
	s2, err := OpenLogStore(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	return s2
}

func TestLogStore(t *testing.T) {
	old := segmentMaxSize
	segmentMaxSize = 512 // a few entries a segment
	defer func() { segmentMaxSize = old }()
	s, err := OpenLogStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	checkRange(t, s, 0, 0)
	storeRange(t, s, 1, 100)
	checkRange(t, s, 1, 100)
	if err := s.StoreLogs([]*raft.Log{entry(50)}); err == nil {
		t.Fatal("an entry was stored over the log")
	}
	s = reopen(t, s)
	checkRange(t, s, 1, 100)

	// Compaction: a prefix ending inside a segment.
	if err := s.DeleteRange(1, 43); err != nil {
		t.Fatal(err)
	}
	checkRange(t, s, 44, 100)
	s = reopen(t, s)
	checkRange(t, s, 44, 100)

	// A new leader overrides a suffix.
	if err := s.DeleteRange(90, 100); err != nil {
		t.Fatal(err)
	}
	checkRange(t, s, 44, 89)
	storeRange(t, s, 90, 120)
	s = reopen(t, s)
	checkRange(t, s, 44, 120)
	if err := s.DeleteRange(60, 70); err == nil {
		t.Fatal("a deletion from the middle was accepted")
	}

	// Everything goes (a snapshot installed past the log), then the log
	// starts again after the snapshot.
	if err := s.DeleteRange(44, 120); err != nil {
		t.Fatal(err)
	}
	checkRange(t, s, 0, 0)
	s = reopen(t, s)
	checkRange(t, s, 0, 0)
	storeRange(t, s, 500, 510)
	s = reopen(t, s)
	checkRange(t, s, 500, 510)

	// Stable store.
	if _, err := s.GetUint64([]byte("CurrentTerm")); err == nil || err.Error() != "not found" {
		t.Fatalf("missing key: %v", err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	if err := s.Set([]byte("LastVoteCand"), []byte("nn2")); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 7 {
		t.Fatalf("term %d, %v", v, err)
	}
	if v, err := s.Get([]byte("LastVoteCand")); err != nil || string(v) != "nn2" {
		t.Fatalf("vote %q, %v", v, err)
	}
}

// An interrupted StoreLogs leaves a torn frame at the end of the last
// segment: it is cut off (that batch was never acknowledged) and the log
// goes on; damage before the tail is refused.
func TestLogStoreTornTail(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenLogStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	storeRange(t, s, 1, 20)
	end := s.segs[0].size // where the next batch would go; zeros follow
	s.Close()
	seg := filepath.Join(dir, fmt.Sprintf("seg-%020d", 1))
	f, _ := os.OpenFile(seg, os.O_WRONLY, 0)
	f.WriteAt([]byte{0, 0, 0, 50, 1, 2, 3}, end) // a frame header and a little payload
	f.Close()
	s, err = OpenLogStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	checkRange(t, s, 1, 20)
	storeRange(t, s, 21, 25)
	s = reopen(t, s)
	checkRange(t, s, 1, 25)
	s.Close()

	// Flip a byte inside entry 3, which good entries follow: not a torn
	// tail but damage to entries that may have been acknowledged; the
	// store refuses to open rather than forget them.
	b, _ := os.ReadFile(seg)
	b[frameHeader+2+3*20] ^= 0xff
	os.WriteFile(seg, b, 0o600)
	if s, err := OpenLogStore(dir); err == nil {
		s.Close()
		t.Fatal("a log damaged before its tail opened")
	}
}

// After a snapshot is installed Raft stores entries past a gap: the log
// starts again there (the store is monotonic).
func TestLogStoreRestartsAfterGap(t *testing.T) {
	s, err := OpenLogStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !s.IsMonotonic() {
		t.Fatal("not monotonic")
	}
	storeRange(t, s, 1, 30)
	storeRange(t, s, 213, 220)
	checkRange(t, s, 213, 220)
	s = reopen(t, s)
	checkRange(t, s, 213, 220)
}

// Crashes part-way through a deletion leave a log that opens, holds
// every entry that was not deleted, and brings back at most a removed
// suffix.
func TestLogStoreCrashDuringDeletes(t *testing.T) {
	old := segmentMaxSize
	segmentMaxSize = 300
	defer func() { segmentMaxSize = old }()

	// Suffix: only the newest of the later segments was removed.
	dir := t.TempDir()
	s, _ := OpenLogStore(dir)
	storeRange(t, s, 1, 100)
	s.mu.RLock()
	segs := len(s.segs)
	newest := s.segs[segs-1].path
	s.mu.RUnlock()
	if segs < 4 {
		t.Fatalf("%d segments", segs)
	}
	s.Close()
	os.Remove(newest)
	s, err := OpenLogStore(dir)
	if err != nil {
		t.Fatalf("after a partial suffix deletion: %v", err)
	}
	last, _ := s.LastIndex()
	checkRange(t, s, 1, last)
	s.Close()

	// Reset: "first" written, only some segments removed.
	dir = t.TempDir()
	s, _ = OpenLogStore(dir)
	storeRange(t, s, 1, 100)
	s.mu.RLock()
	oldest := s.segs[0].path
	s.mu.RUnlock()
	s.Close()
	writeFileSync(dir, "first", []byte("101"))
	os.Remove(oldest)
	s, err = OpenLogStore(dir)
	if err != nil {
		t.Fatalf("after a partial reset: %v", err)
	}
	checkRange(t, s, 0, 0)
	storeRange(t, s, 201, 205)
	s = reopen(t, s)
	checkRange(t, s, 201, 205)
	s.Close()

	// A suffix deletion inside a batch, then new entries: later batches
	// win on load.
	dir = t.TempDir()
	s, _ = OpenLogStore(dir)
	storeRange(t, s, 1, 20)
	if err := s.DeleteRange(17, 20); err != nil {
		t.Fatal(err)
	}
	var fresh []*raft.Log
	for i := uint64(17); i <= 25; i++ {
		l := entry(i)
		l.Term, l.Data = 99, []byte(fmt.Sprintf("new %d", i))
		fresh = append(fresh, l)
	}
	if err := s.StoreLogs(fresh); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	for i := uint64(1); i <= 25; i++ {
		var l raft.Log
		if err := s.GetLog(i, &l); err != nil {
			t.Fatal(err)
		}
		if want := i >= 17; (l.Term == 99) != want {
			t.Fatalf("entry %d has term %d after the override", i, l.Term)
		}
	}
	s.Close()
}

// Damage that is not an interrupted last batch is refused; stray files
// are ignored.
func TestLogStoreDamage(t *testing.T) {
	build := func() (string, *LogStore) {
		dir := t.TempDir()
		s, _ := OpenLogStore(dir)
		storeRange(t, s, 1, 50)
		return dir, s
	}
	seg := func(dir string) string { return filepath.Join(dir, fmt.Sprintf("seg-%020d", 1)) }

	// A zeroed batch header in the middle.
	dir, s := build()
	s.Close()
	b, _ := os.ReadFile(seg(dir))
	copy(b[0:batchHeader], make([]byte, batchHeader))
	os.WriteFile(seg(dir), b, 0o600)
	if s, err := OpenLogStore(dir); err == nil {
		s.Close()
		t.Error("a zeroed header before good batches was taken for the end")
	}

	// A flipped length byte in the first batch.
	dir, s = build()
	s.Close()
	b, _ = os.ReadFile(seg(dir))
	b[9] ^= 0x40
	os.WriteFile(seg(dir), b, 0o600)
	if s, err := OpenLogStore(dir); err == nil {
		s.Close()
		t.Error("a damaged batch length before good batches was accepted")
	}

	// A torn last batch whose later bytes made it to disk but not its
	// first ones: cut, the log opens with the batches before it.
	dir, s = build()
	s.mu.RLock()
	lastBatch := s.locs[50-1].off // entry 50 is the last batch, alone
	s.mu.RUnlock()
	s.Close()
	b, _ = os.ReadFile(seg(dir))
	for i := lastBatch - batchHeader; i < lastBatch+4; i++ {
		b[i] = 0
	}
	os.WriteFile(seg(dir), b, 0o600)
	s, err := OpenLogStore(dir)
	if err != nil {
		t.Fatalf("a torn last batch: %v", err)
	}
	checkRange(t, s, 1, 49)
	s.Close()

	// Stray names.
	dir, s = build()
	s.Close()
	os.WriteFile(filepath.Join(dir, "seg-5"), []byte("junk"), 0o600)
	os.WriteFile(filepath.Join(dir, "seg-000000000000000000xx"), []byte("junk"), 0o600)
	s, err = OpenLogStore(dir)
	if err != nil {
		t.Fatalf("stray files: %v", err)
	}
	checkRange(t, s, 1, 50)
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("seg-%020d", 5))); err == nil {
		t.Error("a stray name made a segment")
	}
}

// FuzzOpenLogStore: whatever a segment holds, opening either fails or
// gives a log whose every entry reads back.
func FuzzOpenLogStore(f *testing.F) {
	dir := f.TempDir()
	s, _ := OpenLogStore(dir)
	s.StoreLogs([]*raft.Log{entry(1), entry(2)})
	s.StoreLogs([]*raft.Log{entry(3)})
	s.Close()
	good, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("seg-%020d", 1)))
	f.Add(good[:len(good)/2])
	f.Add(good)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("seg-%020d", 1)), data, 0o600)
		s, err := OpenLogStore(dir)
		if err != nil {
			return
		}
		defer s.Close()
		first, _ := s.FirstIndex()
		last, _ := s.LastIndex()
		for i := first; i <= last && first != 0; i++ {
			var l raft.Log
			if err := s.GetLog(i, &l); err != nil || l.Index != i {
				t.Fatalf("entry %d of %d-%d: %v", i, first, last, err)
			}
		}
	})
}
