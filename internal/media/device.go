package media

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// StateFile is the name of a device's shared state file, in the device's
// directory (docs/format/media-state.md).
const StateFile = ".strata-media-state"

// slack is how late a caller may come back after its previous request
// completed and still have its next request start when the previous one
// ended. It stands for the asynchronous readahead and writeback that keep
// a real device busy while an application works between its requests
// (the DataNode reads ahead 4 MiB, dfs.datanode.readahead.bytes: some 24
// ms of a disk), and it absorbs the timers' oversleep on a busy machine,
// so that a stream that keeps a device busy gets its modelled throughput.
const slack = 20 * time.Millisecond

// minWait is the shortest wait a charge sleeps for. Timers are coarse
// (sub-millisecond sleeps take about a millisecond on Linux), so a caller
// runs ahead of its device by up to minWait and then sleeps until the
// device has caught up: throughput is the model's, the completion time
// of a single sub-millisecond request is not.
const minWait = 2 * time.Millisecond

// maxBacklog bounds how far ahead of the clock a device's queue may be
// booked; anything beyond was left by a clock that was set back, and is
// dropped.
const maxBacklog = time.Minute

// lockPatience is how long a charge spins on a held device lock before
// it checks whether the holder's process still lives.
const lockPatience = 50 * time.Millisecond

// lockTimeout is how long a charge waits for a device lock whose holder
// seems alive before it takes the lock all the same. The lock is held for
// a few hundred instructions; a word that stays set this long was left in
// the file by a process whose pid has since been reused (after a crash or
// a reboot), or is garbage.
const lockTimeout = time.Second

// State file layout (little-endian), see docs/format/media-state.md.
const (
	stateSize     = 4096
	stateMagic    = "STRMEDIA"
	stateVersion  = 1
	offVersion    = 8
	offSlots      = 12
	offLock       = 16 // pid of the holder, 0 when free
	offBusFree    = 24
	offLastFile   = 32
	offLastEnd    = 40
	offRequests   = 48
	offSeeks      = 56
	offReadBytes  = 64
	offWriteBytes = 72
	offBusy       = 80
	offSlotFree   = 128
	maxStateSlots = (stateSize - offSlotFree) / 8
	_             = uint(maxStateSlots - maxQueueDepth) // maxQueueDepth slots fit
)

// devState is a device's shared state, decoded.
type devState struct {
	busFree  int64 // unix ns the transfer channel's booked work ends
	lastFile uint64
	lastEnd  int64 // where the previous request ended in lastFile
	stats    Stats
	slots    []int64 // unix ns each queue slot is free from
}

// Stats counts what a device served, over every process using it since
// its state file was created.
type Stats struct {
	Requests   uint64
	Seeks      uint64 // requests that did not continue the previous one
	ReadBytes  uint64
	WriteBytes uint64
	// Busy is the summed service time (latency, seeks, transfers) of
	// the requests: the time the model charged, whatever the wall clock
	// did.
	Busy time.Duration
}

// reserve books a request of n bytes at offset off of file on st for a
// caller arriving at now (unix ns) whose previous request completes at
// prev (0 for none), and returns when it completes and whether it paid a
// seek. st is updated.
func (p Params) reserve(st *devState, now, prev int64, file uint64, off, n int64, write bool) (finish int64, seek bool) {
	first := 0 // the slot that frees first
	for j, f := range st.slots {
		if f < st.slots[first] {
			first = j
		}
	}
	if st.slots[first] > now+int64(maxBacklog) || st.busFree > now+int64(maxBacklog) {
		// Left by a clock that has since been set back.
		clear(st.slots)
		st.busFree = 0
	}
	arrival := now
	if prev > 0 && prev >= now-int64(slack) {
		arrival = prev // the caller's stream continues (or runs ahead)
	}
	// Callers book out of time order (they run ahead by up to minWait):
	// take the slot that went free last before the arrival, leaving the
	// earlier ones to callers that are behind; else the first to free.
	i := -1
	for j, f := range st.slots {
		if f <= arrival && (i < 0 || f > st.slots[i]) {
			i = j
		}
	}
	if i < 0 {
		i = first
	}
	start := max(arrival, st.slots[i])
	seek = file != st.lastFile || off != st.lastEnd
	ready := start + int64(p.Latency)
	if seek {
		ready += int64(p.Seek)
	}
	finish = ready
	if x := int64(p.transfer(n, write)); x > 0 {
		// Callers run ahead of the clock by up to minWait, so bookings
		// reach the channel up to slack out of time order: a transfer
		// waits only for booked work beyond that.
		st.busFree = max(st.busFree, ready) + x
		finish = max(ready+x, st.busFree-int64(slack))
	}
	st.slots[i] = finish
	st.lastFile, st.lastEnd = file, off+n
	st.stats.Requests++
	if seek {
		st.stats.Seeks++
	}
	if write {
		st.stats.WriteBytes += uint64(n)
	} else {
		st.stats.ReadBytes += uint64(n)
	}
	st.stats.Busy += time.Duration(finish - start)
	return finish, seek
}

// decodeState reads a state page; ok is false when the page does not
// hold a version-1 state with want slots (a new or foreign file, or one
// left by a model with another queue depth).
func decodeState(b []byte, want int) (st devState, ok bool) {
	ok = st.decode(b, want)
	return st, ok
}

// decode is decodeState into st, reusing its slots.
func (st *devState) decode(b []byte, want int) bool {
	le := binary.LittleEndian
	if want < 1 || want > maxStateSlots {
		return false
	}
	if cap(st.slots) >= want {
		st.slots = st.slots[:want]
		clear(st.slots)
	} else {
		st.slots = make([]int64, want)
	}
	if len(b) < stateSize || string(b[:8]) != stateMagic || le.Uint32(b[offVersion:]) != stateVersion || int(le.Uint32(b[offSlots:])) != want {
		*st = devState{slots: st.slots}
		return false
	}
	st.busFree = int64(le.Uint64(b[offBusFree:]))
	st.lastFile = le.Uint64(b[offLastFile:])
	st.lastEnd = int64(le.Uint64(b[offLastEnd:]))
	st.stats = Stats{
		Requests:   le.Uint64(b[offRequests:]),
		Seeks:      le.Uint64(b[offSeeks:]),
		ReadBytes:  le.Uint64(b[offReadBytes:]),
		WriteBytes: le.Uint64(b[offWriteBytes:]),
		Busy:       time.Duration(le.Uint64(b[offBusy:])),
	}
	for i := range st.slots {
		st.slots[i] = int64(le.Uint64(b[offSlotFree+8*i:]))
	}
	return true
}

// initPage clears page unless it already holds a state (of any queue
// depth).
func initPage(page []byte) {
	if string(page[:8]) == stateMagic && binary.LittleEndian.Uint32(page[offVersion:]) == stateVersion {
		return
	}
	clear(page)
	copy(page, stateMagic)
	binary.LittleEndian.PutUint32(page[offVersion:], stateVersion)
}

// encode writes st to a state page.
func (st *devState) encode(b []byte) {
	le := binary.LittleEndian
	copy(b, stateMagic)
	le.PutUint32(b[offVersion:], stateVersion)
	le.PutUint32(b[offSlots:], uint32(len(st.slots)))
	le.PutUint64(b[offBusFree:], uint64(st.busFree))
	le.PutUint64(b[offLastFile:], st.lastFile)
	le.PutUint64(b[offLastEnd:], uint64(st.lastEnd))
	le.PutUint64(b[offRequests:], st.stats.Requests)
	le.PutUint64(b[offSeeks:], st.stats.Seeks)
	le.PutUint64(b[offReadBytes:], st.stats.ReadBytes)
	le.PutUint64(b[offWriteBytes:], st.stats.WriteBytes)
	le.PutUint64(b[offBusy:], uint64(st.stats.Busy))
	for i, f := range st.slots {
		le.PutUint64(b[offSlotFree+8*i:], uint64(f))
	}
}

// device is an emulated directory at run time. Its state lives in a
// page shared by every process using the directory: StateFile mapped
// into memory, updated under a spin lock in the page itself (a
// compare-and-swap of the holder's pid). Where the file cannot be used
// the page is private to the process; err says why.
type device struct {
	Device
	reqBytes int64

	once sync.Once
	page []byte
	mu   *sync.Mutex // the directory's pageMu: held around the page lock
	lock *uint32     // in page
	st   devState    // scratch, used under lock
	err  error
}

// pageMu holds a mutex per device directory, taken around the page lock
// by every device of this process using the directory (a table installed
// anew does not close the Files of the one before): so only one goroutine
// of a process ever contends for a page lock, and a lock word holding the
// process's own pid was left by another process.
var pageMu sync.Map // string -> *sync.Mutex

func newDevice(d Device, reqBytes int64) *device {
	return &device{Device: d, reqBytes: reqBytes}
}

// open maps the state file, once.
func (d *device) open() {
	d.once.Do(func() {
		d.page, d.err = mapState(filepath.Join(d.Dir, StateFile))
		if d.err != nil {
			d.err = fmt.Errorf("media: %s: %w (device state is private to this process)", d.Dir, d.err)
			d.page = make([]byte, stateSize)
		}
		d.lock = (*uint32)(unsafe.Pointer(&d.page[offLock]))
		mu, _ := pageMu.LoadOrStore(d.Dir, new(sync.Mutex))
		d.mu = mu.(*sync.Mutex)
	})
}

var pid = uint32(os.Getpid())

// acquire takes the device lock; d.mu must be held. A holder that stays
// longer than lockPatience and whose process is gone (killed while holding
// it) loses it, as does any holder after lockTimeout. A lock word holding
// this process's pid was left by an earlier process with the same pid:
// this process's own holders are excluded by d.mu.
func (d *device) acquire() {
	var start, since time.Time
	for spins := 0; !atomic.CompareAndSwapUint32(d.lock, 0, pid); spins++ {
		if spins < 64 {
			continue
		}
		h := atomic.LoadUint32(d.lock)
		if h == pid {
			return
		}
		runtime.Gosched()
		now := time.Now()
		if start.IsZero() {
			start, since = now, now
			continue
		}
		if now.Sub(since) > lockPatience {
			if h != 0 && (now.Sub(start) > lockTimeout || !processAlive(int(h))) &&
				atomic.CompareAndSwapUint32(d.lock, h, pid) {
				return
			}
			since = now
		}
	}
}

func (d *device) release() { atomic.StoreUint32(d.lock, 0) }

// book reserves one request on the device for a caller whose previous
// request completes at notBefore (unix ns; 0 for none) and returns its
// completion time.
func (d *device) book(notBefore int64, file uint64, off, n int64, write bool) int64 {
	d.open()
	now := time.Now().UnixNano()
	d.mu.Lock()
	d.acquire()
	d.st.decode(d.page, d.Params.QueueDepth)
	finish, _ := d.Params.reserve(&d.st, now, notBefore, file, off, n, write)
	d.st.encode(d.page)
	d.release()
	d.mu.Unlock()
	return finish
}

// charge makes the device serve n bytes at off of file as requests of
// at most reqBytes each, one after the other, and waits for them. clock
// is the caller's: when its previous request completes (unix ns), updated
// to when the last of these does. The caller may return up to minWait
// before that; its next request still starts after it.
func (d *device) charge(clock *atomic.Int64, file uint64, off, n int64, write bool) {
	for n > 0 {
		k := min(n, d.reqBytes)
		finish := d.book(clock.Load(), file, off, k, write)
		clock.Store(finish)
		if wait := time.Until(time.Unix(0, finish)); wait >= minWait {
			time.Sleep(wait)
		}
		off += k
		n -= k
	}
}

// ReadStats returns the counters of the device whose directory is dir,
// from its state file (all processes' requests). A directory without a
// state file has served nothing.
func ReadStats(dir string) (Stats, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if os.IsNotExist(err) {
		return Stats{}, nil
	}
	if err != nil {
		return Stats{}, err
	}
	if len(b) < offSlotFree || string(b[:8]) != stateMagic {
		return Stats{}, fmt.Errorf("media: %s is not a device state file", filepath.Join(dir, StateFile))
	}
	st, ok := decodeState(b, int(binary.LittleEndian.Uint32(b[offSlots:])))
	if !ok {
		return Stats{}, fmt.Errorf("media: %s: unsupported state file", filepath.Join(dir, StateFile))
	}
	return st.stats, nil
}
