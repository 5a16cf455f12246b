package namenode

import (
	"context"
	"errors"
	"math"
	"os"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func testKey(client byte, call int32) retryKey {
	k := retryKey{call: call}
	k.client[0] = client
	return k
}

func newTestCache(capacity int) (*retryCache, *fakeClock) {
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	return newRetryCache(capacity, 10*time.Minute, clk.now), clk
}

// mustBegin begins k and checks whether the cache says to run it.
func mustBegin(t *testing.T, c *retryCache, k retryKey, wantRun bool) (*retryEntry, any) {
	t.Helper()
	e, payload, run, err := c.begin(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	if run != wantRun {
		t.Fatalf("begin(%v): run = %v, want %v", k, run, wantRun)
	}
	return e, payload
}

func TestRetryCacheHit(t *testing.T) {
	c, _ := newTestCache(10)
	k := testKey(1, 7)
	e, _ := mustBegin(t, c, k, true)
	c.end(e, true, "first answer")
	for i := 0; i < 2; i++ {
		if _, p := mustBegin(t, c, k, false); p != "first answer" {
			t.Fatalf("retry got %v", p)
		}
	}
	// Another call of the same client, and the same call id of another
	// client, are new calls.
	mustBegin(t, c, testKey(1, 8), true)
	mustBegin(t, c, testKey(2, 7), true)
}

func TestRetryCacheWaitsForAttemptInProgress(t *testing.T) {
	c, _ := newTestCache(10)
	k := testKey(1, 1)
	first, _ := mustBegin(t, c, k, true)
	got := make(chan any, 1)
	go func() {
		_, p, run, err := c.begin(context.Background(), k)
		if err != nil || run {
			got <- errors.New("the retry did not wait for the first attempt's answer")
			return
		}
		got <- p
	}()
	select {
	case p := <-got:
		t.Fatalf("the retry did not wait: %v", p)
	case <-time.After(20 * time.Millisecond):
	}
	c.end(first, true, 42)
	if p := <-got; p != 42 {
		t.Fatalf("the waiting retry got %v", p)
	}

	// A waiter whose caller goes away stops waiting.
	k2 := testKey(1, 2)
	mustBegin(t, c, k2, true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, err := c.begin(ctx, k2); !errors.Is(err, context.Canceled) {
		t.Fatalf("begin with a cancelled context: %v", err)
	}
}

func TestRetryCacheRunsAgainAfterFailure(t *testing.T) {
	c, _ := newTestCache(10)
	k := testKey(3, 1)
	e, _ := mustBegin(t, c, k, true)
	c.end(e, false, "ignored")
	e, _ = mustBegin(t, c, k, true) // the failed call runs again
	// While the second attempt runs, a third waits for it.
	got := make(chan any, 1)
	go func() {
		_, p, run, err := c.begin(context.Background(), k)
		if err != nil || run {
			got <- "ran"
			return
		}
		got <- p
	}()
	time.Sleep(10 * time.Millisecond)
	c.end(e, true, "second")
	if p := <-got; p != "second" {
		t.Fatalf("third attempt got %v", p)
	}
}

func TestRetryCacheExpiry(t *testing.T) {
	c, clk := newTestCache(10)
	k := testKey(4, 1)
	e, _ := mustBegin(t, c, k, true)
	c.end(e, true, nil)
	clk.advance(10*time.Minute - time.Millisecond)
	mustBegin(t, c, k, false)
	clk.advance(time.Millisecond)
	mustBegin(t, c, k, true)
	// Expired entries are dropped when others are added.
	clk.advance(11 * time.Minute)
	c.addSucceeded(testKey(4, 2), nil)
	if n := c.len(); n != 1 {
		t.Fatalf("%d entries after expiry, want 1", n)
	}
}

func TestRetryCacheBound(t *testing.T) {
	c, _ := newTestCache(3)
	for i := int32(0); i < 5; i++ {
		c.addSucceeded(testKey(5, i), i)
	}
	if n := c.len(); n != 3 {
		t.Fatalf("%d entries, want the bound 3", n)
	}
	mustBegin(t, c, testKey(5, 0), true) // the oldest were evicted
	if _, p := mustBegin(t, c, testKey(5, 4), false); p != int32(4) {
		t.Fatalf("newest entry holds %v", p)
	}

	// Evicting an entry in progress does not make its waiting retry run
	// the call again: the waiter holds the entry.
	c, _ = newTestCache(1)
	k := testKey(6, 1)
	first, _ := mustBegin(t, c, k, true)
	got := make(chan bool, 1)
	go func() {
		_, _, run, _ := c.begin(context.Background(), k)
		got <- run
	}()
	time.Sleep(10 * time.Millisecond)
	mustBegin(t, c, testKey(6, 2), true) // evicts k
	c.end(first, true, nil)
	if <-got {
		t.Fatal("the retry of an evicted entry ran the call again")
	}
}

func TestRetryCacheReplayedEntry(t *testing.T) {
	c, _ := newTestCache(10)
	k := testKey(7, 1)
	c.addSucceeded(k, "replayed")
	if _, p := mustBegin(t, c, k, false); p != "replayed" {
		t.Fatalf("got %v", p)
	}
	// A replayed edit does not finish an attempt in progress.
	k2 := testKey(7, 2)
	e, _ := mustBegin(t, c, k2, true)
	c.addSucceeded(k2, "replayed")
	c.end(e, true, "live")
	if _, p := mustBegin(t, c, k2, false); p != "live" {
		t.Fatalf("got %v", p)
	}
}

func TestRetryCacheCapacity(t *testing.T) {
	for _, tc := range []struct {
		percent float64
		memory  int64
		want    int
	}{
		{0.03, 1 << 30, 32768},            // Hadoop's for a 1 GiB heap
		{0.03, math.MaxInt64, 32768},      // no GOMEMLIMIT: 1 GiB assumed
		{0.03, 4 << 30, 131072},           // 4 GiB
		{0, 1 << 30, 1},                   // at least one
		{100, math.MaxInt64 / 2, 1 << 30}, // at most 2^30
	} {
		if got := retryCacheCapacity(tc.percent, tc.memory); got != tc.want {
			t.Errorf("retryCacheCapacity(%v, %d) = %d, want %d", tc.percent, tc.memory, got, tc.want)
		}
	}
}

func TestRetryKeyOf(t *testing.T) {
	id := make([]byte, 16)
	if _, ok := retryKeyOf(id, 0); !ok {
		t.Error("a 16-byte client id with call id 0 is not tracked")
	}
	for _, tc := range []struct {
		id   []byte
		call int32
	}{{nil, 1}, {id[:15], 1}, {append(id, 0), 1}, {id, -1}, {id, -3}} {
		if _, ok := retryKeyOf(tc.id, tc.call); ok {
			t.Errorf("retryKeyOf(%d bytes, %d) is tracked", len(tc.id), tc.call)
		}
	}
}

// rpcAs is the context of an RPC from user with these ids.
func rpcAs(user string, clientID []byte, callID, retry int32) context.Context {
	return ipc.WithCaller(context.Background(), &ipc.Caller{User: user, ClientID: clientID, CallID: callID, Retry: retry})
}

// atMostOnce runs a call once per (client id, call id), and every time
// when the cache is off or the call has no usable ids.
func TestAtMostOnce(t *testing.T) {
	ns, _ := testNS(t)
	ns.retry = newRetryCache(100, time.Minute, ns.now)
	runs := 0
	call := func(context.Context) (int, error) { runs++; return runs, nil }
	cached := func(p any) (int, error) { return p.(int), nil }
	id := []byte("0123456789abcdef")
	for retry := int32(0); retry < 3; retry++ {
		if got, err := atMostOnce(rpcAs("hdfs", id, 5, retry), ns, call, nil, cached); err != nil || got != 1 {
			t.Fatalf("attempt %d: %d, %v; want the first answer 1", retry, got, err)
		}
	}
	for _, ctx := range []context.Context{as("hdfs"), rpcAs("hdfs", id[:4], 5, 1), rpcAs("hdfs", id, -2, 1), context.Background()} {
		atMostOnce(ctx, ns, call, nil, cached)
	}
	if runs != 5 {
		t.Fatalf("%d runs, want 5", runs)
	}
	ns.retry = nil
	atMostOnce(rpcAs("hdfs", id, 5, 1), ns, call, nil, cached)
	if runs != 6 {
		t.Fatal("the disabled cache answered a call")
	}

	// A failed call runs again; a panicking one too, and its retries do
	// not wait forever.
	ns.retry = newRetryCache(100, time.Minute, ns.now)
	fail := errors.New("no")
	failing := func(context.Context) (int, error) { runs++; return 0, fail }
	for i := 0; i < 2; i++ {
		if _, err := atMostOnce(rpcAs("hdfs", id, 9, int32(i)), ns, failing, nil, cached); err != fail {
			t.Fatalf("failing call: %v", err)
		}
	}
	func() {
		defer func() { recover() }()
		atMostOnce(rpcAs("hdfs", id, 10, 0), ns, func(context.Context) (int, error) { panic("boom") }, nil, cached)
	}()
	if got, err := atMostOnce(rpcAs("hdfs", id, 10, 1), ns, call, nil, cached); err != nil || got != runs {
		t.Fatalf("the retry of a panicked call: %d, %v", got, err)
	}
}

// The last edit of an at-most-once call carries its RPC ids; other edits
// and other calls' edits do not.
func TestRPCIDsOnLastEdit(t *testing.T) {
	ns, j := testNS(t)
	ns.retry = newRetryCache(100, time.Minute, ns.now)
	id := []byte("0123456789abcdef")
	ctx := rpcAs("hdfs", id, 3, 0)
	if _, err := atMostOnce(ctx, ns, func(ctx context.Context) (*FileStatus, error) {
		return ns.Create(ctx, "/a/b/f", CreateOptions{ClientName: "c1", CreateParent: true, Perm: 0o644})
	}, nil, nil); err != nil {
		t.Fatal(err)
	}
	mustOK(t, ns.Mkdirs(ctx, "/m", 0o755, false)) // not at-most-once
	if len(j.recs) != 4 {
		t.Fatalf("%d records, want mkdir /a, /a/b, add /a/b/f, mkdir /m", len(j.recs))
	}
	for i, rec := range j.recs {
		e, err := namespace.DecodeEdit(rec)
		if err != nil {
			t.Fatal(err)
		}
		c, call, ok := e.RPCIDs()
		if want := i == 2; ok != want {
			t.Fatalf("record %d has RPC ids: %v, want %v", i, ok, want)
		}
		if ok && (string(c) != string(id) || call != 3) {
			t.Fatalf("record %d: ids %x/%d", i, c, call)
		}
		if _, _, isAdd := e.AddedFile(); isAdd != (i == 2) {
			t.Fatalf("record %d: AddedFile %v", i, isAdd)
		}
	}
}

// retryClient is one HDFS client for the tests below: its client id and
// the clientProtocol it calls in process, with the call ids it chooses.
type retryClient struct {
	t  *testing.T
	cp *clientProtocol
	id []byte
}

func (c *retryClient) ctx(call, retry int32) context.Context {
	return rpcAs("hdfs", c.id, call, retry)
}

func (c *retryClient) create(call, retry int32, p string) (*hdfspb.CreateResponseProto, error) {
	return c.cp.create(c.ctx(call, retry), &hdfspb.CreateRequestProto{
		Src: proto.String(p), Masked: &hdfspb.FsPermissionProto{Perm: proto.Uint32(0o644)},
		ClientName: proto.String("DFSClient_retry"), CreateFlag: proto.Uint32(createFlagCreate),
		CreateParent: proto.Bool(true), Replication: proto.Uint32(1), BlockSize: proto.Uint64(1 << 20),
	})
}

func (c *retryClient) delete(call, retry int32, p string) (bool, error) {
	r, err := c.cp.delete(c.ctx(call, retry), &hdfspb.DeleteRequestProto{Src: proto.String(p), Recursive: proto.Bool(true)})
	return r.GetResult(), err
}

func (c *retryClient) rename(call, retry int32, src, dst string) (bool, error) {
	r, err := c.cp.rename(c.ctx(call, retry), &hdfspb.RenameRequestProto{Src: proto.String(src), Dst: proto.String(dst)})
	return r.GetResult(), err
}

func (c *retryClient) rename2(call, retry int32, src, dst string) error {
	_, err := c.cp.rename2(c.ctx(call, retry), &hdfspb.Rename2RequestProto{Src: proto.String(src), Dst: proto.String(dst), OverwriteDest: proto.Bool(false)})
	return err
}

func (c *retryClient) append(call, retry int32, p string) (*hdfspb.AppendResponseProto, error) {
	return c.cp.append(c.ctx(call, retry), &hdfspb.AppendRequestProto{Src: proto.String(p), ClientName: proto.String("DFSClient_retry")})
}

func (c *retryClient) mkdir(call int32, p string) {
	c.t.Helper()
	if _, err := c.cp.mkdirs(c.ctx(call, 0), &hdfspb.MkdirsRequestProto{Src: proto.String(p), Masked: &hdfspb.FsPermissionProto{Perm: proto.Uint32(0o755)}, CreateParent: proto.Bool(true)}); err != nil {
		c.t.Fatal(err)
	}
}

// Each at-most-once call is run, then retried with the same
// ids: every retry gets the first answer; the same call with a new call
// id is a new call and does not.
func TestRetriedCallsGetFirstAnswer(t *testing.T) {
	nn := startTestNameNode(t, nil)
	c := &retryClient{t: t, cp: &clientProtocol{nn: nn, ns: nn.ns}, id: []byte("client-000000001")}

	first, err := c.create(1, 0, "/d/f")
	if err != nil {
		t.Fatal(err)
	}
	for retry := int32(1); retry <= 2; retry++ {
		again, err := c.create(1, retry, "/d/f")
		if err != nil {
			t.Fatalf("retried create: %v", err)
		}
		if !proto.Equal(again, first) {
			t.Fatalf("retried create answered %v, want %v", again, first)
		}
	}
	_, err = c.create(2, 0, "/d/f")
	wantClass(t, err, ipc.ClassAlreadyBeingCreated) // a new call is not answered from the cache

	c.mkdir(3, "/gone")
	for retry := int32(0); retry <= 1; retry++ {
		if ok, err := c.delete(4, retry, "/gone"); err != nil || !ok {
			t.Fatalf("delete attempt %d: %v, %v; want true", retry, ok, err)
		}
	}
	if ok, _ := c.delete(5, 0, "/gone"); ok {
		t.Fatal("a new delete of a deleted path returned true")
	}
	// A delete that found nothing is not a success: its retry runs again.
	if ok, _ := c.delete(6, 0, "/never"); ok {
		t.Fatal("delete of a missing path returned true")
	}
	c.mkdir(7, "/never")
	if ok, _ := c.delete(6, 1, "/never"); !ok {
		t.Fatal("the retry of a delete that returned false was answered from the cache")
	}

	c.mkdir(8, "/src")
	for retry := int32(0); retry <= 1; retry++ {
		if ok, err := c.rename(9, retry, "/src", "/dst"); err != nil || !ok {
			t.Fatalf("rename attempt %d: %v, %v; want true", retry, ok, err)
		}
	}
	if ok, _ := c.rename(10, 0, "/src", "/dst"); ok {
		t.Fatal("a new rename of a moved path returned true")
	}
	for retry := int32(0); retry <= 1; retry++ {
		if err := c.rename2(11, retry, "/dst", "/dst2"); err != nil {
			t.Fatalf("rename2 attempt %d: %v", retry, err)
		}
	}
	wantClass(t, c.rename2(12, 0, "/dst", "/dst2"), ipc.ClassFileNotFound)

	// append: close the file first (it has no blocks).
	if _, err := c.cp.complete(c.ctx(13, 0), &hdfspb.CompleteRequestProto{Src: proto.String("/d/f"), ClientName: proto.String("DFSClient_retry"), FileId: proto.Uint64(first.GetFs().GetFileId())}); err != nil {
		t.Fatal(err)
	}
	a, err := c.append(14, 0, "/d/f")
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.append(14, 1, "/d/f")
	if err != nil {
		t.Fatalf("retried append: %v", err)
	}
	if !proto.Equal(a, again) {
		t.Fatalf("retried append answered %v, want %v", again, a)
	}
	_, err = c.append(15, 0, "/d/f")
	wantClass(t, err, ipc.ClassAlreadyBeingCreated)
}

// A retry that arrives while the first attempt still waits for its sync
// waits for it and gets its answer, even when the first caller went away
// meanwhile (its connection broke: the reason it retries).
func TestRetryWaitsForFirstAttempt(t *testing.T) {
	ns, _ := testNS(t)
	ns.retry = newRetryCache(100, time.Minute, ns.now)
	mustOK(t, ns.Mkdirs(as("hdfs"), "/x", 0o755, false))
	j := &slowJournal{release: make(chan struct{})}
	ns.journal = j
	cp := &clientProtocol{ns: ns}
	id := []byte("0123456789abcdef")
	del := func(ctx context.Context, out chan<- bool) {
		r, err := cp.delete(ctx, &hdfspb.DeleteRequestProto{Src: proto.String("/x")})
		if err != nil {
			t.Error(err)
		}
		out <- r.GetResult()
	}
	ctx, cancel := context.WithCancel(rpcAs("hdfs", id, 1, 0))
	first, retry := make(chan bool, 1), make(chan bool, 1)
	go del(ctx, first)
	time.Sleep(20 * time.Millisecond) // the first attempt waits in Sync
	cancel()
	go del(rpcAs("hdfs", id, 1, 1), retry)
	select {
	case <-first:
		t.Fatal("the first attempt gave up its sync when its caller went away")
	case <-retry:
		t.Fatal("the retry did not wait for the first attempt")
	case <-time.After(20 * time.Millisecond):
	}
	close(j.release)
	if !<-first || !<-retry {
		t.Fatal("delete and its retry must both answer true")
	}
	if st, _ := ns.FileInfo(as("hdfs"), "/x"); st != nil {
		t.Fatal("/x still exists")
	}
}

// After a restart the NameNode replays the edit log; the RPC ids of the
// replayed edits answer the retries of the calls that made them.
func TestRetriesAnsweredAfterRestart(t *testing.T) {
	nn := startTestNameNode(t, nil)
	cfg := nn.cfg
	c := &retryClient{t: t, cp: &clientProtocol{nn: nn, ns: nn.ns}, id: []byte("restart-client-1")}
	created, err := c.create(1, 0, "/r/f")
	if err != nil {
		t.Fatal(err)
	}
	c.mkdir(2, "/r/dir")
	if ok, err := c.delete(3, 0, "/r/dir"); err != nil || !ok {
		t.Fatalf("delete: %v, %v", ok, err)
	}
	c.mkdir(4, "/r/src")
	if ok, err := c.rename(5, 0, "/r/src", "/r/dst"); err != nil || !ok {
		t.Fatalf("rename: %v, %v", ok, err)
	}
	g, err := c.create(6, 0, "/r/g")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.cp.complete(c.ctx(7, 0), &hdfspb.CompleteRequestProto{Src: proto.String("/r/g"), ClientName: proto.String("DFSClient_retry"), FileId: proto.Uint64(g.GetFs().GetFileId())}); err != nil {
		t.Fatal(err)
	}
	appended, err := c.append(8, 0, "/r/g")
	if err != nil {
		t.Fatal(err)
	}

	// A crash: the storage as it is now (every acknowledged edit synced,
	// no checkpoint since), copied while the NameNode is idle.
	crashed := t.TempDir()
	if err := os.CopyFS(crashed, os.DirFS(cfg.NameDir)); err != nil {
		t.Fatal(err)
	}
	nn.Close()
	cfg.NameDir = crashed
	again, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if n := again.ns.retry.len(); n != 5 {
		t.Errorf("%d retry cache entries after replay, want 5 (create, delete, rename, create, append)", n)
	}
	c.cp = &clientProtocol{nn: again, ns: again.ns}
	st, err := c.create(1, 1, "/r/f")
	if err != nil {
		t.Fatalf("create retried after the restart: %v", err)
	}
	if !proto.Equal(st, created) {
		t.Errorf("create retried after the restart answered %v, want %v", st, created)
	}
	if ok, err := c.delete(3, 1, "/r/dir"); err != nil || !ok {
		t.Errorf("delete retried after the restart: %v, %v; want true", ok, err)
	}
	if ok, err := c.rename(5, 1, "/r/src", "/r/dst"); err != nil || !ok {
		t.Errorf("rename retried after the restart: %v, %v; want true", ok, err)
	}
	if a, err := c.append(8, 1, "/r/g"); err != nil || !proto.Equal(a, appended) {
		t.Errorf("append retried after the restart: %v, %v; want %v", a, err, appended)
	}
	_, err = c.create(9, 0, "/r/f")
	wantClass(t, err, ipc.ClassAlreadyBeingCreated)

	// With the cache off, nothing is recorded or answered.
	cfg2 := cfg
	cfg2.NameDir = t.TempDir()
	if err := os.CopyFS(cfg2.NameDir, os.DirFS(crashed)); err != nil {
		t.Fatal(err)
	}
	cfg2.RetryCache = false
	off, err := New(cfg2)
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if off.ns.retry != nil {
		t.Fatal("the retry cache exists although it is off")
	}
	c.cp = &clientProtocol{nn: off, ns: off.ns}
	if ok, _ := c.delete(3, 1, "/r/dir"); ok {
		t.Error("a retried delete was answered with the cache off")
	}
}
