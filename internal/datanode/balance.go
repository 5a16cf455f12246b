package datanode

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
)

// Balancer moves, as Hadoop's DataXceiver.replaceBlock and copyBlock: the
// balancer sends REPLACE_BLOCK to the target, which copies the replica
// from a proxy holding it with COPY_BLOCK, stores it, reports it to the
// NameNode with the delete hint (the source whose replica it replaces)
// and answers the balancer. Both ends count against
// dfs.datanode.balance.max.concurrent.moves and share
// dfs.datanode.balance.bandwidthPerSec (Hadoop's BlockBalanceThrottler).

const (
	defaultBalanceBandwidth   = 100 << 20
	defaultMaxConcurrentMoves = 100
	// throttlePeriod is the throttler's accounting period (Hadoop's 500 ms).
	throttlePeriod = 500 * time.Millisecond
)

// balancing is a node's move slots and bandwidth.
type balancing struct {
	moves chan struct{}
	th    *throttler
	hints sync.Map // block id → delete hint, until the replica is reported
}

func newBalancing(bandwidth int64, moves int, now func() time.Time) *balancing {
	return &balancing{moves: make(chan struct{}, moves), th: newThrottler(bandwidth, now, time.Sleep)}
}

// acquire takes a move slot without waiting; false when all are taken.
func (b *balancing) acquire() bool {
	select {
	case b.moves <- struct{}{}:
		return true
	default:
		return false
	}
}

func (b *balancing) release() { <-b.moves }

// writer throttles writes to w.
func (b *balancing) writer(w io.Writer) io.Writer { return throttledWriter{w, b.th} }

type throttledWriter struct {
	w  io.Writer
	th *throttler
}

func (t throttledWriter) Write(p []byte) (int, error) {
	t.th.throttle(int64(len(p)))
	return t.w.Write(p)
}

// throttler bounds the bytes per period all its users move together
// (Hadoop's DataTransferThrottler): a user past the period's budget
// sleeps until the next period.
type throttler struct {
	mu        sync.Mutex
	perPeriod int64
	now       func() time.Time
	sleep     func(time.Duration)
	start     time.Time
	used      int64
}

func newThrottler(bandwidth int64, now func() time.Time, sleep func(time.Duration)) *throttler {
	per := bandwidth * int64(throttlePeriod) / int64(time.Second)
	return &throttler{perPeriod: max(per, 1), now: now, sleep: sleep, start: now()}
}

// throttle accounts n bytes, sleeping while the current period's budget
// is spent.
func (t *throttler) throttle(n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		now := t.now()
		if el := now.Sub(t.start); el >= throttlePeriod {
			periods := el / throttlePeriod
			t.start = t.start.Add(periods * throttlePeriod)
			t.used = max(0, t.used-int64(periods)*t.perPeriod)
		}
		if t.used < t.perPeriod {
			t.used += n
			return
		}
		t.sleep(t.start.Add(throttlePeriod).Sub(now))
	}
}

// takeDelHint returns and forgets the delete hint of a replica a move
// received.
func (d *DataNode) takeDelHint(id uint64) string {
	if v, ok := d.balance.hints.LoadAndDelete(id); ok {
		return v.(string)
	}
	return ""
}

// replaceBlock serves REPLACE_BLOCK: copy the block from m's source (the
// proxy) and keep it here on a volume of m's storage type.
func (d *DataNode) replaceBlock(c *peerConn, m *hdfspb.OpReplaceBlockProto) error {
	eb := m.GetHeader().GetBlock()
	if err := d.checkAccess(c, c, datatransfer.OpReplaceBlock, eb, m.GetHeader().GetToken(), blocktoken.Replace); err != nil {
		return err
	}
	b := blockOf(eb)
	reply := func(st hdfspb.Status, msg string) error {
		return datatransfer.WriteResponse(c, errResponse(st, msg))
	}
	if !d.balance.acquire() {
		return reply(hdfspb.Status_ERROR, fmt.Sprintf("Not able to receive block %d from %s because threshold has been reached", b.ID, c.RemoteAddr()))
	}
	defer d.balance.release()
	if _, ok := d.data.Get(b.ID); ok {
		return reply(hdfspb.Status_ERROR, fmt.Sprintf("Not able to receive block %d: a replica of it is already on this DataNode", b.ID))
	}
	src := m.GetSource().GetId()
	if src.GetIpAddr() == "" || src.GetXferPort() == 0 {
		return reply(hdfspb.Status_ERROR_INVALID, "REPLACE_BLOCK without a source DataNode")
	}
	// The copy takes as long as the shared balancing bandwidth allows, so
	// it has no overall deadline: each read from the proxy has the socket
	// timeout, and the balancer hears IN_PROGRESS meanwhile.
	ctx, cancel := context.WithCancel(d.ctx)
	defer cancel()
	stop := d.reportProgress(c, d.progressInterval(), cancel)
	err := d.copyFromProxy(ctx, b, eb, m, net.JoinHostPort(src.GetIpAddr(), fmt.Sprint(src.GetXferPort())))
	if !stop() {
		return errors.New("replaceBlock: the balancer connection broke during the copy")
	}
	if err != nil {
		d.log.Warn("datanode: balancer move failed", "block", b.String(), "proxy", src.GetIpAddr(), "err", err)
		return reply(hdfspb.Status_ERROR, fmt.Sprintf("Not able to receive block %d from %s: %v", b.ID, src.GetIpAddr(), err))
	}
	d.log.Info("datanode: moved block", "block", b.String(), "proxy", fmt.Sprintf("%s:%d", src.GetIpAddr(), src.GetXferPort()), "delHint", m.GetDelHint())
	return reply(hdfspb.Status_SUCCESS, "")
}

// progressInterval is how often a move tells the balancer it is still
// copying: half the socket timeout, as Hadoop's BlockReceiver.
func (d *DataNode) progressInterval() time.Duration {
	return max(d.cfg.SocketTimeout/2, 10*time.Millisecond)
}

// reportProgress writes an IN_PROGRESS response to w every interval
// until the returned stop is called; stop waits for the writer to end
// and reports whether every write succeeded. A failed write (the
// balancer is gone) calls abort.
func (d *DataNode) reportProgress(w io.Writer, interval time.Duration, abort func()) (stop func() bool) {
	done := make(chan struct{})
	ok := make(chan bool, 1)
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				ok <- true
				return
			case <-t.C:
				if err := datatransfer.WriteResponse(w, &hdfspb.BlockOpResponseProto{Status: hdfspb.Status_IN_PROGRESS.Enum()}); err != nil {
					abort()
					ok <- false
					return
				}
			}
		}
	}()
	return func() bool {
		close(done)
		return <-ok
	}
}

func (d *DataNode) copyFromProxy(ctx context.Context, b fsdataset.Block, eb *hdfspb.ExtendedBlockProto, m *hdfspb.OpReplaceBlockProto, addr string) error {
	raw, err := d.dialer().Dial(ctx, addr, m.GetHeader().GetToken())
	if err != nil {
		return err
	}
	pc := newPeerConn(raw, d.cfg.SocketTimeout, d.cfg.SocketWriteTimeout)
	br, err := datatransfer.NewCopyBlockReader(ctx, pc, eb, m.GetHeader().GetToken())
	if err != nil {
		return fmt.Errorf("COPY_BLOCK from %s: %w", addr, err)
	}
	defer br.Close()
	w, err := d.data.CreateRBW(fsdataset.Block{ID: b.ID, GenStamp: b.GenStamp, NumBytes: b.NumBytes}, storage.Type(m.GetStorageType()), m.GetStorageId())
	if errors.Is(err, fsdataset.ErrNoVolume) && m.GetStorageId() != "" {
		w, err = d.data.CreateRBW(fsdataset.Block{ID: b.ID, GenStamp: b.GenStamp, NumBytes: b.NumBytes}, storage.Type(m.GetStorageType()), "")
	}
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			w.Abort()
		}
	}()
	in := bufio.NewReaderSize(br, datatransfer.PacketDataSize)
	buf := make([]byte, datatransfer.PacketDataSize)
	var got int64
	for {
		n, rerr := in.Read(buf)
		if n > 0 {
			d.balance.th.throttle(int64(n))
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
			got += int64(n)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	if got != b.NumBytes {
		return fmt.Errorf("copied %d bytes of %d", got, b.NumBytes)
	}
	// The hint must be in place before Finalize reports the replica.
	if hint := m.GetDelHint(); hint != "" {
		d.balance.hints.Store(b.ID, hint)
	}
	if _, err := w.Finalize(); err != nil {
		d.balance.hints.Delete(b.ID)
		done = true
		w.Abort()
		return err
	}
	done = true
	d.stats.BytesWritten.Add(got)
	return nil
}
