package namenode

import (
	"container/list"
	"context"
	"math"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/namespace"
)

// The retry cache is Hadoop's NameNode RetryCache. A client that loses
// its connection in the middle of a call, or whose NameNode fails over,
// sends the call again with the same client id and call id (and a retry
// count above 0). For the @AtMostOnce methods of ClientProtocol — create,
// append, delete, rename, rename2, updatePipeline and the snapshot calls
// createSnapshot, deleteSnapshot and renameSnapshot in strata; Hadoop's
// others (concat, createSymlink, xattrs, cache directives)
// strata does not have, and truncate is @Idempotent — running the call
// again would fail ("already exists", "current leaseholder is trying to
// recreate file") or answer differently (delete and rename returning
// false), so the NameNode answers it from the cache instead:
//
//   - no entry for (client id, call id): record one in progress, run the
//     call, record whether it succeeded and its answer;
//   - an entry in progress (the retry overtook the first attempt): wait
//     for it to end, then as below;
//   - a successful entry: answer as it did (create: the file status it
//     returned; append: its last block and status; the others: success);
//   - a failed entry: run the call again (it is in progress once more).
//
// As in Hadoop the lookup is by (client id, call id) whatever the retry
// count: a client never reuses a call id for another call, so a first
// attempt finds no entry. Calls without a 16-byte client id or with a
// negative call id (in-process calls, Hadoop's dummy ids) bypass the
// cache. Delete and the old rename count as successful only when they
// return true, as Hadoop's setState(entry, ret).
//
// The last edit of a call run with an entry carries the call's RPC ids
// (mutateThen, withRPCIDs). A NameNode replaying the edit log — at start,
// and a standby applying the leader's log — calls noteApplied for every
// edit, which adds a successful entry for those ids, so that a retry on
// the restarted NameNode or on the new active after a failover gets the
// first answer too.
//
// Entries expire dfs.namenode.retrycache.expirytime.millis after they
// were added (or replayed), as Hadoop's, and at most capacity are kept:
// adding one past it evicts the oldest, whatever its state. A waiter
// holds the entry it waits on, so an eviction never makes a retry run a
// call a second time while the first attempt still runs.

// retryKey identifies one client call.
type retryKey struct {
	client [16]byte
	call   int32
}

// retryKeyOf is the key of a call with these RPC ids; ok is false for ids
// the cache does not track (Hadoop's skipRetryCache).
func retryKeyOf(clientID []byte, callID int32) (k retryKey, ok bool) {
	if len(clientID) != len(k.client) || callID < 0 {
		return k, false
	}
	copy(k.client[:], clientID)
	k.call = callID
	return k, true
}

type retryState uint8

const (
	retryInProgress retryState = iota
	retrySucceeded
	retryFailed
)

// retryEntry is one call's record. Its fields but key are guarded by the
// cache's mu.
type retryEntry struct {
	key     retryKey
	expires time.Time
	state   retryState
	payload any           // the call's answer, when it succeeded
	done    chan struct{} // closed when the attempt in progress ends
	elem    *list.Element // in the cache's order; nil once evicted
}

// retryCache holds the entries. Its mu is a leaf lock: it may be taken
// with the Namesystem's mu held (noteApplied), never the other way, and
// nothing waits while holding it.
type retryCache struct {
	now      func() time.Time
	expiry   time.Duration
	capacity int

	mu      sync.Mutex
	entries map[retryKey]*retryEntry
	order   list.List // of *retryEntry, oldest first (also soonest to expire)
}

// newRetryCache returns a cache of at most capacity (>= 1) entries kept
// for expiry each, on clock now.
func newRetryCache(capacity int, expiry time.Duration, now func() time.Time) *retryCache {
	return &retryCache{now: now, expiry: expiry, capacity: max(capacity, 1), entries: map[retryKey]*retryEntry{}}
}

// defaultRetryCacheMemory is the memory the heap percent applies to when
// the Go runtime has no memory limit (GOMEMLIMIT unset).
const defaultRetryCacheMemory = 1 << 30

// retryCacheCapacity is Hadoop's LightWeightGSet.computeCapacity for a
// 64-bit JVM: the power of two nearest percent% of memory, divided by 8
// (a reference's size), between 1 and 2^30. memory <= 0 or MaxInt64 (no
// limit) means defaultRetryCacheMemory.
func retryCacheCapacity(percent float64, memory int64) int {
	if memory <= 0 || memory == math.MaxInt64 {
		memory = defaultRetryCacheMemory
	}
	bytes := float64(memory) * percent / 100
	if bytes < 1 {
		return 1
	}
	e := int(math.Log2(bytes)+0.5) - 3
	return 1 << min(max(e, 0), 30)
}

// begin looks call k up, waiting while an attempt is in progress (until
// ctx is done). run tells the caller to run the call and report with end;
// otherwise the call succeeded before and payload is its answer.
func (c *retryCache) begin(ctx context.Context, k retryKey) (e *retryEntry, payload any, run bool, err error) {
	c.mu.Lock()
	now := c.now()
	e = c.entries[k]
	if e != nil && !now.Before(e.expires) {
		c.remove(e)
		e = nil
	}
	if e == nil {
		e = &retryEntry{key: k, state: retryInProgress, done: make(chan struct{})}
		c.insert(e, now)
		c.mu.Unlock()
		return e, nil, true, nil
	}
	for e.state == retryInProgress {
		done := e.done
		c.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, nil, false, ctx.Err()
		}
		c.mu.Lock()
	}
	defer c.mu.Unlock()
	if e.state == retrySucceeded {
		return e, e.payload, false, nil
	}
	// The earlier attempt failed: this one runs the call again.
	e.state, e.done = retryInProgress, make(chan struct{})
	return e, nil, true, nil
}

// end records how the attempt begin told to run ended, and wakes the
// retries waiting for it.
func (c *retryCache) end(e *retryEntry, ok bool, payload any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.state != retryInProgress {
		return
	}
	e.state = retryFailed
	if ok {
		e.state, e.payload = retrySucceeded, payload
	}
	close(e.done)
	e.done = nil
}

// addSucceeded records call k as succeeded with payload (its replayed
// edit). An attempt in progress for k is left to finish the entry itself.
func (c *retryCache) addSucceeded(k retryKey, payload any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if e := c.entries[k]; e != nil {
		if e.state == retryInProgress {
			return
		}
		c.remove(e)
	}
	c.insert(&retryEntry{key: k, state: retrySucceeded, payload: payload}, now)
}

// insert adds e, expiring at now + expiry, after evicting the expired
// entries and, at capacity, the oldest. Called with mu held.
func (c *retryCache) insert(e *retryEntry, now time.Time) {
	for f := c.order.Front(); f != nil; f = c.order.Front() {
		old := f.Value.(*retryEntry)
		if now.Before(old.expires) && len(c.entries) < c.capacity {
			break
		}
		c.remove(old)
	}
	e.expires = now.Add(c.expiry)
	e.elem = c.order.PushBack(e)
	c.entries[e.key] = e
}

// remove drops e from the cache. Called with mu held.
func (c *retryCache) remove(e *retryEntry) {
	if e.elem == nil {
		return
	}
	c.order.Remove(e.elem)
	e.elem = nil
	if c.entries[e.key] == e {
		delete(c.entries, e.key)
	}
}

// len is the number of entries kept.
func (c *retryCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// retryCallKey is the context key of the retryKey of the at-most-once
// call a context runs (set by atMostOnce, read by withRPCIDs).
type retryCallKey struct{}

// atMostOnce runs call as an @AtMostOnce ClientProtocol method: once per
// (client id, call id) while the retry cache is on (see the comment at
// the top of this file). succeeded says whether an answer counts as a
// success (nil: every answer without an error does); cached turns the
// payload of a successful entry — call's answer, or noteApplied's for a
// replayed edit — into the answer to a retry.
//
// The first attempt runs to its end even if its caller goes away (as a
// Hadoop handler does): its answer is what the caller's retry will get,
// so its edits' sync is waited for on the retry's behalf.
func atMostOnce[T any](ctx context.Context, s *Namesystem, call func(context.Context) (T, error), succeeded func(T) bool, cached func(payload any) (T, error)) (res T, err error) {
	var k retryKey
	ok := false
	if c, isRPC := ipc.CallerFrom(ctx); isRPC {
		k, ok = retryKeyOf(c.ClientID, c.CallID)
	}
	if s.retry == nil || !ok {
		return call(ctx)
	}
	e, payload, run, err := s.retry.begin(ctx, k)
	if err != nil {
		return res, err
	}
	if !run {
		return cached(payload)
	}
	done := false
	defer func() { s.retry.end(e, done, res) }() // also when call panics
	res, err = call(context.WithValue(context.WithoutCancel(ctx), retryCallKey{}, k))
	done = err == nil && (succeeded == nil || succeeded(res))
	return res, err
}

// withRPCIDs attaches the RPC ids of the at-most-once call ctx runs, if
// any, to the last of ops: the edit whose replay answers the call's
// retries (noteApplied).
func withRPCIDs(ctx context.Context, ops []namespace.Edit) []namespace.Edit {
	k, ok := ctx.Value(retryCallKey{}).(retryKey)
	if !ok || len(ops) == 0 {
		return ops
	}
	ops[len(ops)-1] = ops[len(ops)-1].WithRPCIDs(k.client[:], k.call)
	return ops
}

// noteApplied adds a successful retry cache entry for the RPC ids edit e
// carries, if any, with the answer a retry of its call needs: for a
// create the new file's status, for an append its last block and status,
// for the other calls none. Call it with s.mu held, right after
// s.tree.Apply(e) succeeded, for every edit a NameNode replays: load at
// start, and the standby's apply of the leader's log. The NameNode that
// ran the call records its entry itself (atMostOnce) and does not call
// it for its own edits; if it does, the running attempt's entry wins.
func (s *Namesystem) noteApplied(e namespace.Edit) {
	if s.retry == nil {
		return
	}
	clientID, callID, ok := e.RPCIDs()
	if !ok {
		return
	}
	k, ok := retryKeyOf(clientID, callID)
	if !ok {
		return
	}
	s.retry.addSucceeded(k, s.replayedAnswer(e))
}

// rpcEdit is a committed edit that carries rpc ids, kept for snapshots:
// a member restored from a snapshot replays them into its retry cache.
type rpcEdit struct {
	at  time.Time
	rec []byte
}

// rememberRPCEdit keeps committed edit e, whose record is rec, when it
// carries rpc ids (with s.mu held), for the retry cache's expiry and at
// most as many as the cache holds.
func (s *Namesystem) rememberRPCEdit(e namespace.Edit, rec []byte) {
	if s.retry == nil {
		return
	}
	if _, _, ok := e.RPCIDs(); !ok {
		return
	}
	now := s.now()
	limit := min(s.cfg.retryCacheEntries, 1<<16)
	drop := 0
	for drop < len(s.rpcEdits) && (len(s.rpcEdits)-drop >= limit || now.Sub(s.rpcEdits[drop].at) > s.cfg.retryCacheExpiry) {
		drop++
	}
	if drop > 0 {
		s.rpcEdits = append(s.rpcEdits[:0:0], s.rpcEdits[drop:]...)
	}
	s.rpcEdits = append(s.rpcEdits, rpcEdit{at: now, rec: append([]byte(nil), rec...)})
}

// rpcEditRecords lists the kept edits still within the expiry (s.mu held).
func (s *Namesystem) rpcEditRecords() [][]byte {
	now := s.now()
	var out [][]byte
	for _, r := range s.rpcEdits {
		if now.Sub(r.at) <= s.cfg.retryCacheExpiry {
			out = append(out, r.rec)
		}
	}
	return out
}

// replayedAnswer is the answer of the call that made edit e, just
// applied, as atMostOnce records it (nil when the call returns no data).
// The located block of an append has the replicas known now: none at
// start, until DataNodes report.
func (s *Namesystem) replayedAnswer(e namespace.Edit) any {
	if id, p, ok := e.AddedFile(); ok {
		if n := s.tree.Lookup(p); n != nil && n.ID == id {
			st := s.status(n)
			return &st
		}
		return nil
	}
	if p, ok := e.CreatedSnapshot(); ok {
		return p
	}
	if p, ok := e.ReopenedFile(); ok {
		if n := s.tree.Lookup(p); n != nil && !n.IsDir {
			lb, _ := appendLastBlock(n)
			st := s.status(n)
			return &appendAnswer{lb: lb, st: &st}
		}
	}
	return nil
}

// appendAnswer is Append's answer as the retry cache keeps it.
type appendAnswer struct {
	lb *LocatedBlock
	st *FileStatus
}

// retryAnswerMissing is the error of a retry whose successful first
// attempt left no answer to repeat (its edit was replayed without the
// file it made): not expected, but not a reason to run the call again.
func retryAnswerMissing(method string) error {
	return ipc.Errorf(ipc.ClassIOException, "%s: the retried call succeeded before, but its answer is not in the retry cache", method)
}
