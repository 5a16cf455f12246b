package editlog

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "name")
	v, err := Format(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if v.LayoutVersion != LayoutVersion || v.NamespaceID == 0 || v.NamespaceID > 0x7fffffff {
		t.Errorf("bad version %+v", v)
	}
	if !regexp.MustCompile(`^CID-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(v.ClusterID) {
		t.Errorf("clusterID %q", v.ClusterID)
	}
	if !strings.HasPrefix(v.BlockPoolID, "BP-") {
		t.Errorf("blockpoolID %q", v.BlockPoolID)
	}
	names := listNames(t, dir)
	for _, n := range []string{versionFile, imageName(0), seenTxIDFile} {
		if !has(names, n) {
			t.Errorf("after Format, current/ lacks %s: %v", n, names)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, currentDir, versionFile))
	for _, k := range []string{"namespaceID=", "clusterID=CID-", "cTime=0", "creationTime=", "storageType=NAME_NODE", "blockpoolID=BP-", "layoutVersion=1"} {
		if !strings.Contains(string(raw), "\n"+k) {
			t.Errorf("VERSION lacks %q:\n%s", k, raw)
		}
	}

	_, err = Format(dir, false)
	if !errors.Is(err, ErrFormatted) {
		t.Fatalf("second Format without force: %v", err)
	}
	v2, err := Format(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if v2.ClusterID == v.ClusterID {
		t.Error("forced Format kept the clusterID")
	}

	l, got := mustOpenLoad(t, dir, Options{})
	defer l.Close()
	if got.imageTxID != 0 || got.image != "" || !got.imageSeen || len(got.recs) != 0 {
		t.Errorf("fresh Load: %+v", got)
	}
	if l.Version() != v2 {
		t.Errorf("Version() = %+v, want %+v", l.Version(), v2)
	}
	if l.LastTxID() != 0 {
		t.Errorf("LastTxID = %d", l.LastTxID())
	}
	if _, err := Format(dir, true); !errors.Is(err, ErrInUse) {
		t.Errorf("Format of an open dir: %v", err)
	}
}

func TestOpenNotFormatted(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(dir, Options{Logger: quiet})
	if !errors.Is(err, ErrNotFormatted) {
		t.Fatalf("got %v", err)
	}
	want := "editlog: " + dir + " is not formatted; run 'strata namenode -format'"
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if _, err := Open(filepath.Join(dir, "missing"), Options{}); !errors.Is(err, ErrNotFormatted) {
		t.Errorf("missing dir: %v", err)
	}
}

func TestLock(t *testing.T) {
	dir := formatted(t)
	l, err := Open(dir, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, Options{Logger: quiet})
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("second Open: %v", err)
	}
	if want := "editlog: storage directory " + dir + " is in use by another process"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	l2, err := Open(dir, Options{Logger: quiet})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	l2.Close()
}

func TestRoundTrip(t *testing.T) {
	dir := formatted(t)
	l, _ := mustOpenLoad(t, dir, Options{})
	const n = 1000
	appendSync(t, l, 1, n)
	if l.LastTxID() != n || l.SyncedTxID() != n {
		t.Fatalf("LastTxID %d SyncedTxID %d", l.LastTxID(), l.SyncedTxID())
	}
	st := l.Stats()
	if st.Records != n || st.Syncs != 1 || st.TxnsSinceImage != n || st.SegmentStartTxID != 1 {
		t.Errorf("stats %+v", st)
	}
	if end := dataEnd(t, segPath(dir, 1)); st.SegmentBytes != end {
		t.Errorf("SegmentBytes %d, records end at %d", st.SegmentBytes, end)
	}
	if sz := fileSize(t, segPath(dir, 1)); sz != defaultPreallocation {
		t.Errorf("segment is %d bytes, want preallocated %d", sz, defaultPreallocation)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l, got := mustOpenLoad(t, dir, Options{})
	checkRecs(t, got.recs, 1, n)
	if l.LastTxID() != n {
		t.Fatalf("LastTxID after Load = %d", l.LastTxID())
	}
	// Appending continues the same segment.
	appendSync(t, l, n+1, n+10)
	l.Close()
	l, got = mustOpenLoad(t, dir, Options{})
	defer l.Close()
	checkRecs(t, got.recs, 1, n+10)
	if names := listNames(t, dir); has(names, inProgressName(n+1)) {
		t.Errorf("reopen started a new segment: %v", names)
	}
}

func TestAppendRules(t *testing.T) {
	dir := formatted(t)
	l, err := Open(dir, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append([]byte("x")); !errors.Is(err, ErrNotLoaded) {
		t.Errorf("Append before Load: %v", err)
	}
	if err := l.Load(nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Load(nil, nil); err == nil {
		t.Error("second Load succeeded")
	}
	if _, err := l.Append(make([]byte, MaxRecordSize+1)); err == nil {
		t.Error("oversized record accepted")
	}
	if err := l.Sync(context.Background(), 5); err == nil {
		t.Error("Sync of a txid never appended succeeded")
	}
	if err := l.Sync(context.Background(), 0); err != nil {
		t.Errorf("Sync(0): %v", err)
	}
	tx, _ := l.Append([]byte("a"))
	l.Close()
	if _, err := l.Append([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	if err := l.Sync(context.Background(), tx); err != nil {
		t.Errorf("Sync of a txid Close made durable: %v", err)
	}
	if err := l.Sync(context.Background(), tx+1); err == nil {
		t.Error("Sync after Close succeeded")
	}
}

func TestCloseSyncs(t *testing.T) {
	dir := formatted(t)
	l, _ := mustOpenLoad(t, dir, Options{})
	for i := uint64(1); i <= 5; i++ {
		l.Append([]byte(payload(i)))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, got := mustOpenLoad(t, dir, Options{})
	defer l.Close()
	checkRecs(t, got.recs, 1, 5)
}

// The group commit test: 64 goroutines × 50 records must share fsyncs.
func TestGroupCommit(t *testing.T) {
	dir := formatted(t)
	l, _ := mustOpenLoad(t, dir, Options{
		// A slow fsync makes batching deterministic even on tmpfs.
		SyncHook: func() error { time.Sleep(2 * time.Millisecond); return nil },
	})
	const goroutines, each = 64, 50
	var nsLock sync.Mutex // the caller's namespace lock
	applied := make(map[uint64]string)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				data := strings.Repeat("y", g+i)
				nsLock.Lock()
				tx, err := l.Append([]byte(data))
				applied[tx] = data
				nsLock.Unlock()
				if err != nil {
					errs <- err
					return
				}
				if err := l.Sync(context.Background(), tx); err != nil {
					errs <- err
					return
				}
				if l.SyncedTxID() < tx {
					errs <- errors.New("Sync returned before the txid was durable")
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := l.Stats()
	const records = goroutines * each
	if st.Records != records {
		t.Fatalf("Records = %d", st.Records)
	}
	t.Logf("%d records in %d syncs (%.1f per sync), sync time %v", st.Records, st.Syncs, float64(st.Records)/float64(st.Syncs), st.SyncTime)
	if st.Syncs >= records/4 {
		t.Errorf("group commit ineffective: %d syncs for %d records", st.Syncs, records)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, got := mustOpenLoad(t, dir, Options{})
	defer l.Close()
	if len(got.recs) != records {
		t.Fatalf("replayed %d records", len(got.recs))
	}
	for i, r := range got.recs {
		if r.txid != uint64(i+1) || r.data != applied[r.txid] {
			t.Fatalf("record %d: txid %d", i, r.txid)
		}
	}
}

func TestWriteFailure(t *testing.T) {
	dir := formatted(t)
	// Write 1 is the new segment's header (created by Load); fail the 3rd
	// batch.
	f := &faults{failWrite: 4, errWrite: errInjected}
	l, _ := mustOpenLoad(t, dir, Options{wrapFile: f.wrap, SegmentPreallocation: -1})
	appendSync(t, l, 1, 3)
	appendSync(t, l, 4, 6)
	tx, err := l.Append([]byte(payload(7)))
	if err != nil {
		t.Fatal(err)
	}
	err = l.Sync(context.Background(), tx)
	if !errors.Is(err, ErrFailed) || !errors.Is(err, errInjected) {
		t.Fatalf("Sync after a failed write: %v", err)
	}
	// The log stays failed.
	if _, err := l.Append([]byte("x")); !errors.Is(err, ErrFailed) {
		t.Errorf("Append on a failed log: %v", err)
	}
	if err := l.Sync(context.Background(), 3); !errors.Is(err, ErrFailed) {
		t.Errorf("Sync on a failed log: %v", err)
	}
	if _, err := l.Roll(); !errors.Is(err, ErrFailed) {
		t.Errorf("Roll on a failed log: %v", err)
	}
	if err := l.SaveImage(3, nil); !errors.Is(err, ErrFailed) {
		t.Errorf("SaveImage on a failed log: %v", err)
	}
	if err := l.Close(); !errors.Is(err, ErrFailed) {
		t.Errorf("Close of a failed log: %v", err)
	}
	// What was synced survives; the half-written batch is a torn tail.
	l, got := mustOpenLoad(t, dir, Options{})
	defer l.Close()
	checkRecs(t, got.recs, 1, 6)
}

func TestSyncFailure(t *testing.T) {
	dir := formatted(t)
	// Sync 1 is the segment header's; fail the 2nd batch's fsync.
	f := &faults{failSync: 3, errSyncFail: errInjected}
	l, _ := mustOpenLoad(t, dir, Options{wrapFile: f.wrap, SegmentPreallocation: -1})
	appendSync(t, l, 1, 2)
	l.Append([]byte("x"))
	if err := l.Sync(context.Background(), 3); !errors.Is(err, errInjected) {
		t.Fatalf("Sync: %v", err)
	}
	if err := l.Sync(context.Background(), 3); !errors.Is(err, ErrFailed) {
		t.Fatalf("second Sync: %v", err)
	}
	if l.SyncedTxID() != 2 {
		t.Errorf("SyncedTxID = %d, want 2", l.SyncedTxID())
	}
	l.Close()

	// A SyncHook error fails the log the same way.
	dir = formatted(t)
	var fail bool
	l, _ = mustOpenLoad(t, dir, Options{SyncHook: func() error {
		if fail {
			return errInjected
		}
		return nil
	}})
	defer l.Close()
	appendSync(t, l, 1, 1)
	fail = true
	l.Append([]byte("x"))
	if err := l.Sync(context.Background(), 2); !errors.Is(err, ErrFailed) {
		t.Fatalf("Sync: %v", err)
	}
}

func TestRollFailure(t *testing.T) {
	dir := formatted(t)
	// Sync 1: Load's segment header; 2: the batch Roll flushes; 3: the
	// truncation of the preallocated zeros; 4: new segment's header.
	f := &faults{failSync: 4, errSyncFail: errInjected}
	l, _ := mustOpenLoad(t, dir, Options{wrapFile: f.wrap})
	for i := uint64(1); i <= 3; i++ {
		l.Append([]byte(payload(i)))
	}
	if _, err := l.Roll(); !errors.Is(err, ErrFailed) {
		t.Fatalf("Roll: %v", err)
	}
	if _, err := l.Append(nil); !errors.Is(err, ErrFailed) {
		t.Errorf("Append after failed Roll: %v", err)
	}
	l.Close()
}

func TestSyncContext(t *testing.T) {
	dir := formatted(t)
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	var block bool
	var mu sync.Mutex
	l, _ := mustOpenLoad(t, dir, Options{SyncHook: func() error {
		mu.Lock()
		b := block
		mu.Unlock()
		if b {
			entered <- struct{}{}
			<-release
		}
		return nil
	}})
	defer l.Close()
	mu.Lock()
	block = true
	mu.Unlock()
	tx1, _ := l.Append([]byte("a"))
	done := make(chan error)
	go func() { done <- l.Sync(context.Background(), tx1) }()
	<-entered // the leader is inside its fsync
	tx2, _ := l.Append([]byte("b"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Sync(ctx, tx2); !errors.Is(err, context.Canceled) {
		t.Errorf("Sync with a cancelled context: %v", err)
	}
	mu.Lock()
	block = false
	mu.Unlock()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(context.Background(), tx2); err != nil {
		t.Fatal(err)
	}
}

func TestStatsAndRoll(t *testing.T) {
	dir := formatted(t)
	l, _ := mustOpenLoad(t, dir, Options{})
	defer l.Close()
	end, err := l.Roll()
	if err != nil || end != 0 {
		t.Fatalf("Roll of an empty log: %d, %v", end, err)
	}
	for i := uint64(1); i <= 4; i++ {
		l.Append([]byte(payload(i)))
	}
	// Roll syncs what is buffered.
	end, err = l.Roll()
	if err != nil || end != 4 {
		t.Fatalf("Roll: %d, %v", end, err)
	}
	if l.SyncedTxID() != 4 {
		t.Errorf("SyncedTxID after Roll = %d", l.SyncedTxID())
	}
	names := listNames(t, dir)
	if !has(names, finalizedName(1, 4)) || !has(names, inProgressName(5)) || has(names, inProgressName(1)) {
		t.Errorf("after Roll: %v", names)
	}
	st := l.Stats()
	if st.SegmentStartTxID != 5 || st.SegmentBytes != segmentHeaderSize || st.TxnsSinceImage != 4 {
		t.Errorf("stats %+v", st)
	}
	if end2, _ := l.Roll(); end2 != 4 || !has(listNames(t, dir), inProgressName(5)) {
		t.Errorf("second Roll: %d %v", end2, listNames(t, dir))
	}
	if err := l.SaveImage(4, func(w io.Writer) error { _, err := io.WriteString(w, "img"); return err }); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.ImageTxID != 4 || st.TxnsSinceImage != 0 {
		t.Errorf("stats after SaveImage %+v", st)
	}
	if err := l.SaveImage(5, nil); err == nil {
		t.Error("SaveImage beyond SyncedTxID succeeded")
	}
}

func TestPreallocationFailure(t *testing.T) {
	dir := formatted(t)
	// Write 1: segment header; 2: first batch; 3: first zero-fill write.
	f := &faults{failWrite: 3, errWrite: errInjected}
	l, _ := mustOpenLoad(t, dir, Options{wrapFile: f.wrap})
	defer l.Close()
	tx, _ := l.Append([]byte("a"))
	if err := l.Sync(context.Background(), tx); !errors.Is(err, errInjected) {
		t.Fatalf("Sync with a failed preallocation: %v", err)
	}
	if l.SyncedTxID() != 0 {
		t.Errorf("SyncedTxID = %d", l.SyncedTxID())
	}
}

func TestSaveImageWriteError(t *testing.T) {
	dir := formatted(t)
	l, _ := mustOpenLoad(t, dir, Options{})
	defer l.Close()
	appendSync(t, l, 1, 3)
	boom := errors.New("boom")
	err := l.SaveImage(3, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("SaveImage: %v", err)
	}
	names := listNames(t, dir)
	if has(names, imageName(3)) || has(names, imageTmpName(3)) {
		t.Errorf("failed SaveImage left files: %v", names)
	}
	// The log is not failed by a checkpoint error.
	appendSync(t, l, 4, 4)
	if err := l.SaveImage(4, nil); err != nil {
		t.Fatal(err)
	}
}

// The image callback need not read the whole payload.
func TestImagePartialRead(t *testing.T) {
	dir := formatted(t)
	l, _ := mustOpenLoad(t, dir, Options{})
	appendSync(t, l, 1, 2)
	l.SaveImage(2, func(w io.Writer) error { _, err := io.WriteString(w, strings.Repeat("z", 5000)); return err })
	l.Close()
	l, err := Open(dir, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var n int
	err = l.Load(func(txid uint64, r io.Reader) error {
		b := make([]byte, 10)
		n, _ = io.ReadFull(r, b)
		return nil
	}, nil)
	if err != nil || n != 10 || l.LastTxID() != 2 {
		t.Fatalf("Load: %v, read %d, last %d", err, n, l.LastTxID())
	}
}
