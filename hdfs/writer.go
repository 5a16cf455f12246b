package hdfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// FileWriter writes an HDFS file: it asks the NameNode for blocks and
// streams each through a pipeline of DataNodes. When a DataNode fails
// mid-block, the writer drops it from the pipeline, gets a new generation
// stamp, resends what was not acknowledged to the remaining nodes and goes
// on, as HDFS's DFSOutputStream does; the NameNode re-replicates the block
// once the file is closed. Data is durable once Close returns nil (or
// after Sync). Not safe for concurrent use.
type FileWriter struct {
	c         *Client
	ctx       context.Context
	path      string
	fileID    uint64
	blockSize int64

	blk          *hdfspb.LocatedBlockProto // current block; B has the current gen stamp
	nodes        []*hdfspb.DatanodeInfoProto
	storageIDs   []string
	storageTypes []hdfspb.StorageTypeProto
	bw           *datatransfer.BlockWriter
	inBlock      int64 // bytes accepted into the current block
	prev         *hdfspb.ExtendedBlockProto
	exclude      map[string]*hdfspb.DatanodeInfoProto
	err          error
	closed       bool
}

// Create implements fs.FileSystem.
func (c *Client) Create(ctx context.Context, p string, o fs.CreateOptions) (io.WriteCloser, error) {
	return c.CreateFile(ctx, p, o)
}

// CreateFile creates p and returns a writer for it. The file exists (empty
// and being written) once CreateFile returns.
func (c *Client) CreateFile(ctx context.Context, p string, o fs.CreateOptions) (*FileWriter, error) {
	perm := o.Perm
	if perm == 0 {
		perm = 0o666
	}
	flag := uint32(createFlagCreate)
	if o.Overwrite {
		flag |= createFlagOverwrite
	}
	repl, bs := o.Replication, o.BlockSize
	if repl == 0 {
		repl = c.opts.Replication
	}
	if bs == 0 {
		bs = c.opts.BlockSize
	}
	if bs == 0 || repl == 0 {
		d, err := c.serverDefaults(ctx)
		if err != nil {
			return nil, err
		}
		if bs == 0 {
			bs = int64(d.GetBlockSize())
		}
		if repl == 0 {
			repl = int(d.GetReplication())
		}
	}
	req := &hdfspb.CreateRequestProto{
		Src:          proto.String(p),
		Masked:       &hdfspb.FsPermissionProto{Perm: proto.Uint32(uint32(perm &^ c.opts.Umask))},
		Unmasked:     &hdfspb.FsPermissionProto{Perm: proto.Uint32(uint32(perm))}, // for default ACLs, as Hadoop 3
		ClientName:   proto.String(c.name),
		CreateFlag:   proto.Uint32(flag),
		CreateParent: proto.Bool(o.CreateParent),
		Replication:  proto.Uint32(uint32(repl)),
		BlockSize:    proto.Uint64(uint64(bs)),
	}
	var resp hdfspb.CreateResponseProto
	if err := c.call(ctx, "create", req, &resp); err != nil {
		return nil, pathErr("create", p, err)
	}
	c.startRenewing()
	return &FileWriter{c: c, ctx: ctx, path: p, fileID: resp.GetFs().GetFileId(), blockSize: bs, exclude: map[string]*hdfspb.DatanodeInfoProto{}}, nil
}

const (
	createFlagCreate    = 1
	createFlagOverwrite = 2
)

// serverDefaults is the NameNode's getServerDefaults answer, cached for
// ServerDefaultsValidity as Hadoop's DFSClient does. A failure is
// returned again, without a call, for a backoff doubling from 1 s to 1
// min, so that callers on every dial (sasl.go) cost no RPC each.
func (c *Client) serverDefaults(ctx context.Context) (*hdfspb.FsServerDefaultsProto, error) {
	now := c.clock()
	validity := c.opts.ServerDefaultsValidity
	if validity <= 0 {
		validity = time.Hour
	}
	c.mu.Lock()
	d, at, ferr, retry := c.defaults, c.defaultsAt, c.defaultsErr, c.defaultsRetry
	c.mu.Unlock()
	if d != nil && now.Sub(at) < validity {
		return d, nil
	}
	if ferr != nil && now.Before(retry) {
		return nil, ferr
	}
	var resp hdfspb.GetServerDefaultsResponseProto
	if err := c.call(ctx, "getServerDefaults", &hdfspb.GetServerDefaultsRequestProto{}, &resp); err != nil {
		err = wrapErr(err)
		if ctx.Err() != nil {
			return nil, err // the caller gave up: not the NameNode's failure
		}
		c.mu.Lock()
		c.defaultsBackoff = min(max(2*c.defaultsBackoff, time.Second), time.Minute)
		c.defaultsErr, c.defaultsRetry = err, now.Add(c.defaultsBackoff)
		c.mu.Unlock()
		return nil, err
	}
	d = resp.GetServerDefaults()
	if d == nil {
		d = &hdfspb.FsServerDefaultsProto{}
	}
	c.mu.Lock()
	c.defaults, c.defaultsAt = d, now
	c.defaultsErr, c.defaultsBackoff = nil, 0
	c.mu.Unlock()
	return d, nil
}

func (c *Client) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// Append opens an existing file to add data at its end.
func (c *Client) Append(ctx context.Context, p string) (*FileWriter, error) {
	var resp hdfspb.AppendResponseProto
	req := &hdfspb.AppendRequestProto{Src: proto.String(p), ClientName: proto.String(c.name), Flag: proto.Uint32(4)}
	if err := c.call(ctx, "append", req, &resp); err != nil {
		return nil, pathErr("append", p, err)
	}
	c.startRenewing()
	w := &FileWriter{c: c, ctx: ctx, path: p, fileID: resp.GetStat().GetFileId(), blockSize: int64(resp.GetStat().GetBlocksize()), exclude: map[string]*hdfspb.DatanodeInfoProto{}}
	if lb := resp.GetBlock(); lb != nil {
		// Continue the partial last block in place.
		w.blk = lb
		w.nodes, w.storageIDs, w.storageTypes = lb.GetLocs(), lb.GetStorageIDs(), lb.GetStorageTypes()
		w.inBlock = int64(lb.GetB().GetNumBytes())
		err := w.reopenPipeline(hdfspb.OpWriteBlockProto_PIPELINE_SETUP_APPEND, nil)
		if errors.Is(err, datatransfer.ErrAccessToken) {
			// A DataNode refused the token (it expired, or its key
			// rolled away): updateBlockForPipeline hands out a new one.
			err = w.reopenPipeline(hdfspb.OpWriteBlockProto_PIPELINE_SETUP_APPEND, nil)
		}
		if err != nil {
			w.abandonWrite()
			return nil, pathErr("append", p, err)
		}
		return w, nil
	}
	// The last block is full (or there is none): the next write starts a
	// new block after it.
	lbs, err := c.blockLocations(ctx, p)
	if err != nil {
		w.abandonWrite()
		return nil, err
	}
	if bs := lbs.GetBlocks(); len(bs) > 0 {
		w.prev = bs[len(bs)-1].GetB()
	}
	return w, nil
}

// abandonWrite releases the lease renewal of a writer that failed to open.
func (w *FileWriter) abandonWrite() {
	w.closed = true
	w.c.stopRenewing()
}

// Write implements io.Writer.
func (w *FileWriter) Write(p []byte) (int, error) {
	n, err := w.write(p)
	fs.CountWritten("hdfs", n)
	return n, err
}

func (w *FileWriter) write(p []byte) (int, error) {
	if w.closed {
		return 0, os.ErrClosed
	}
	if w.err != nil {
		return 0, w.err
	}
	written := 0
	for written < len(p) {
		if w.bw == nil {
			if err := w.startBlock(); err != nil {
				return written, w.fail(err)
			}
		}
		chunk := p[written:min(len(p), written+int(w.blockSize-w.inBlock))]
		n, err := w.bw.Write(chunk)
		w.inBlock += int64(n)
		written += n
		if err != nil {
			if err := w.recover(err, false); err != nil {
				return written, w.fail(err)
			}
			continue
		}
		if w.inBlock == w.blockSize {
			if err := w.endBlock(); err != nil {
				return written, w.fail(err)
			}
		}
	}
	return written, nil
}

func (w *FileWriter) fail(err error) error {
	w.err = &os.PathError{Op: "write", Path: w.path, Err: err}
	return w.err
}

// startBlock allocates the next block and connects its pipeline, asking
// for other DataNodes when one cannot be reached (dfs.client.block.write.retries: 3).
// A block token a DataNode refuses (InvalidBlockTokenException in
// Hadoop's client) abandons the block too, and the next addBlock brings a
// new token; the node is not excluded for it, and that is tried once.
func (w *FileWriter) startBlock() error {
	var lastErr error
	tokenRetried := false
	for attempt := 0; attempt < 4; attempt++ {
		var excl []*hdfspb.DatanodeInfoProto
		for _, d := range w.exclude {
			excl = append(excl, d)
		}
		req := &hdfspb.AddBlockRequestProto{Src: proto.String(w.path), ClientName: proto.String(w.c.name), Previous: w.prev,
			ExcludeNodes: excl, FileId: proto.Uint64(w.fileID)}
		var resp hdfspb.AddBlockResponseProto
		if err := w.addBlock(req, &resp); err != nil {
			return err
		}
		lb := resp.GetBlock()
		if len(lb.GetLocs()) == 0 {
			// A NameNode must name at least one target; never trust it to.
			return fmt.Errorf("hdfs: addBlock for %s returned a block without locations", w.path)
		}
		w.blk, w.inBlock = lb, 0
		w.nodes, w.storageIDs, w.storageTypes = lb.GetLocs(), lb.GetStorageIDs(), lb.GetStorageTypes()
		err := w.connect(datatransfer.WriteBlockConfig{Block: lb.GetB()}, nil)
		if err == nil {
			return nil
		}
		lastErr = err
		// Give the block back and exclude the node that failed.
		if errors.Is(err, datatransfer.ErrAccessToken) && !tokenRetried {
			tokenRetried = true
			attempt--
		} else {
			var pe *datatransfer.PipelineError
			bad := 0
			if errors.As(err, &pe) && pe.BadIndex >= 0 && pe.BadIndex < len(w.nodes) {
				bad = pe.BadIndex
			}
			w.exclude[w.nodes[bad].GetId().GetDatanodeUuid()] = w.nodes[bad]
		}
		ab := &hdfspb.AbandonBlockRequestProto{B: lb.GetB(), Src: proto.String(w.path), Holder: proto.String(w.c.name), FileId: proto.Uint64(w.fileID)}
		if err := w.c.call(w.ctx, "abandonBlock", ab, &hdfspb.AbandonBlockResponseProto{}); err != nil {
			return wrapErr(err)
		}
		w.blk = nil
	}
	return fmt.Errorf("could not set up a write pipeline: %w", lastErr)
}

// addBlock calls addBlock, waiting while the NameNode says the previous
// block is not yet replicated enough.
func (w *FileWriter) addBlock(req *hdfspb.AddBlockRequestProto, resp *hdfspb.AddBlockResponseProto) error {
	delay := 100 * time.Millisecond
	for i := 0; ; i++ {
		err := w.c.call(w.ctx, "addBlock", req, resp)
		var re *RemoteError
		if err == nil || i >= 8 || !errors.As(wrapErr(err), &re) || re.Class != "org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException" {
			return wrapErr(err)
		}
		time.Sleep(delay)
		delay *= 2
	}
}

// connect opens a BlockWriter to the current pipeline (w.nodes) with cfg's
// stage and offsets, then writes resend (data not acknowledged before a
// recovery). A PIPELINE_CLOSE_RECOVERY only asks the nodes to finish the
// block: no BlockWriter follows (w.bw stays nil).
func (w *FileWriter) connect(cfg datatransfer.WriteBlockConfig, resend []byte) error {
	if len(w.nodes) == 0 {
		return errors.New("no DataNodes in the pipeline")
	}
	cfg.ClientName = w.c.name
	cfg.Token = w.blk.GetBlockToken()
	if len(w.storageTypes) > 0 {
		cfg.StorageType = w.storageTypes[0]
		cfg.TargetStorageTypes = w.storageTypes[1:]
	}
	if len(w.storageIDs) > 0 {
		cfg.StorageID = w.storageIDs[0]
		cfg.TargetStorageIDs = w.storageIDs[1:]
	}
	cfg.Targets = w.nodes[1:]
	cfg.SocketTimeout = w.c.opts.SocketTimeout
	cfg.SocketWriteTimeout = w.c.opts.SocketWriteTimeout
	conn, err := w.c.dial(w.ctx, w.nodes[0], cfg.Token)
	if err != nil {
		return &datatransfer.PipelineError{BadIndex: 0, Status: hdfspb.Status_ERROR, Seqno: -1, Err: err}
	}
	if cfg.Stage != nil && *cfg.Stage == hdfspb.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY {
		return datatransfer.CloseRecovery(w.ctx, conn, cfg)
	}
	bw, err := datatransfer.NewBlockWriter(w.ctx, conn, cfg)
	if err != nil {
		return err
	}
	if len(resend) > 0 {
		if _, err := bw.Write(resend); err != nil {
			bw.Abort()
			return err
		}
	}
	w.bw = bw
	return nil
}

// recover rebuilds the pipeline after cause without the node that
// failed: a new generation stamp, the remaining nodes told to keep what was
// acknowledged, the rest sent again, the NameNode told of the new pipeline.
// A node that fails while the pipeline is rebuilt is dropped too, unless
// it refused the block token: each try gets a new token from
// updateBlockForPipeline, and a refused one is retried once with the same
// nodes.
//
// With closing (the failure came from the BlockWriter's Close and it had
// nothing unacknowledged: every node had acknowledged the whole block, and
// some may have finalized it) the pipeline is recovered in the close stage
// instead, as Hadoop's DataStreamer does: PIPELINE_CLOSE_RECOVERY gives the
// remaining nodes' replicas the new generation stamp and finalizes them,
// no data is sent, and w.bw stays nil: the block is done.
func (w *FileWriter) recover(cause error, closing bool) error {
	off, data := w.bw.Unacked()
	w.bw.Abort()
	w.bw = nil
	stage := hdfspb.OpWriteBlockProto_PIPELINE_SETUP_STREAMING_RECOVERY
	if closing && len(data) == 0 {
		stage = hdfspb.OpWriteBlockProto_PIPELINE_CLOSE_RECOVERY
	}
	tokenRetried := false
	for tries := 0; tries < 6; tries++ {
		if tries > 0 && errors.Is(cause, datatransfer.ErrAccessToken) && !tokenRetried {
			tokenRetried = true
			if cause = w.reopenPipeline(stage, &recoverState{off: off, data: data}); cause == nil {
				return nil
			}
			continue
		}
		bad := 0
		var pe *datatransfer.PipelineError
		if errors.As(cause, &pe) && pe.BadIndex >= 0 && pe.BadIndex < len(w.nodes) {
			bad = pe.BadIndex
		}
		badNode := w.nodes[bad]
		w.exclude[badNode.GetId().GetDatanodeUuid()] = badNode
		w.nodes = remove(w.nodes, bad)
		w.storageIDs = remove(w.storageIDs, bad)
		w.storageTypes = remove(w.storageTypes, bad)
		if len(w.nodes) == 0 {
			return fmt.Errorf("all DataNodes of the pipeline for blk_%d are bad; the last was %s: %w", w.blk.GetB().GetBlockId(), dnAddr(badNode), cause)
		}
		err := w.reopenPipeline(stage, &recoverState{off: off, data: data})
		if err == nil {
			return nil
		}
		cause = err
	}
	return fmt.Errorf("pipeline recovery for blk_%d failed: %w", w.blk.GetB().GetBlockId(), cause)
}

// remove returns s without element i (s itself if i is out of range).
func remove[T any](s []T, i int) []T {
	if i < 0 || i >= len(s) {
		return s
	}
	return append(append([]T{}, s[:i]...), s[i+1:]...)
}

type recoverState struct {
	off  int64
	data []byte
}

// reopenPipeline gets a new generation stamp for the current block and
// connects w.nodes with the given stage (append, or recovery from rs),
// then records the new pipeline at the NameNode.
func (w *FileWriter) reopenPipeline(stage hdfspb.OpWriteBlockProto_BlockConstructionStage, rs *recoverState) error {
	old := proto.Clone(w.blk.GetB()).(*hdfspb.ExtendedBlockProto)
	off := w.inBlock
	var resend []byte
	if rs != nil {
		off, resend = rs.off, rs.data
	}
	old.NumBytes = proto.Uint64(uint64(off))
	var ub hdfspb.UpdateBlockForPipelineResponseProto
	if err := w.c.call(w.ctx, "updateBlockForPipeline", &hdfspb.UpdateBlockForPipelineRequestProto{Block: old, ClientName: proto.String(w.c.name)}, &ub); err != nil {
		return wrapErr(err)
	}
	newGS := ub.GetBlock().GetB().GetGenerationStamp()
	nb := proto.Clone(old).(*hdfspb.ExtendedBlockProto)
	nb.GenerationStamp = proto.Uint64(newGS)
	// The new generation stamp comes with a new token, as in Hadoop's
	// DataStreamer; keep the old one only if the NameNode sent none.
	if tok := ub.GetBlock().GetBlockToken(); tok != nil {
		w.blk.BlockToken = tok
	}
	// As Hadoop's DataStreamer: the header names the block with its old
	// generation stamp; the new one travels as latestGenerationStamp.
	err := w.connect(datatransfer.WriteBlockConfig{
		Block: old, Stage: stage.Enum(), LatestGenerationStamp: newGS,
		MinBytesRcvd: off, MaxBytesRcvd: off + int64(len(resend)), Offset: off,
	}, resend)
	if err != nil {
		return err
	}
	var ids []*hdfspb.DatanodeIDProto
	for _, n := range w.nodes {
		ids = append(ids, n.GetId())
	}
	up := &hdfspb.UpdatePipelineRequestProto{ClientName: proto.String(w.c.name), OldBlock: old, NewBlock: nb, NewNodes: ids, StorageIDs: w.storageIDs}
	if err := w.c.call(w.ctx, "updatePipeline", up, &hdfspb.UpdatePipelineResponseProto{}); err != nil {
		if w.bw != nil {
			w.bw.Abort()
			w.bw = nil
		}
		return wrapErr(err)
	}
	w.blk.B = nb
	return nil
}

// endBlock finishes the current block (waiting for every ack) and
// remembers it as the previous block for the next addBlock.
func (w *FileWriter) endBlock() error {
	for w.bw != nil {
		err := w.bw.Close()
		if err == nil {
			break
		}
		// A close recovery finishes the block (w.bw is then nil); a
		// streaming one resends and the new writer is closed again.
		if err := w.recover(err, true); err != nil {
			return err
		}
	}
	w.bw = nil
	prev := proto.Clone(w.blk.GetB()).(*hdfspb.ExtendedBlockProto)
	prev.NumBytes = proto.Uint64(uint64(w.inBlock))
	w.prev = prev
	w.blk, w.inBlock = nil, 0
	return nil
}

// Flush makes the data written so far visible to new readers (hflush):
// it returns once every DataNode of the pipeline has it.
func (w *FileWriter) Flush() error { return w.flush(false) }

// Sync is Flush plus an fsync on every DataNode (hsync): the data
// survives a power loss of the whole pipeline. The NameNode learns the
// new length.
func (w *FileWriter) Sync() error {
	if err := w.flush(true); err != nil {
		return err
	}
	if w.blk == nil {
		return nil
	}
	req := &hdfspb.FsyncRequestProto{Src: proto.String(w.path), Client: proto.String(w.c.name), LastBlockLength: proto.Int64(w.inBlock), FileId: proto.Uint64(w.fileID)}
	return pathErr("sync", w.path, w.c.call(w.ctx, "fsync", req, &hdfspb.FsyncResponseProto{}))
}

func (w *FileWriter) flush(sync bool) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return os.ErrClosed
	}
	if w.bw == nil {
		return nil
	}
	for {
		err := w.bw.Flush(sync)
		if err == nil {
			return nil
		}
		if err := w.recover(err, false); err != nil {
			return w.fail(err)
		}
	}
}

// Close finishes the last block and completes the file, waiting until the
// NameNode has a good replica of every block.
func (w *FileWriter) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	defer w.c.stopRenewing()
	if w.err != nil {
		if w.bw != nil {
			w.bw.Abort()
		}
		return w.err
	}
	if w.bw != nil {
		if err := w.endBlock(); err != nil {
			return w.fail(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	delay := 50 * time.Millisecond
	for {
		req := &hdfspb.CompleteRequestProto{Src: proto.String(w.path), ClientName: proto.String(w.c.name), Last: w.prev, FileId: proto.Uint64(w.fileID)}
		var resp hdfspb.CompleteResponseProto
		if err := w.c.call(ctx, "complete", req, &resp); err != nil {
			w.err = pathErr("close", w.path, err)
			return w.err
		}
		if resp.GetResult() {
			return nil
		}
		select {
		case <-ctx.Done():
			w.err = &os.PathError{Op: "close", Path: w.path, Err: errors.New("Unable to close file because the last block does not have enough number of replicas")}
			return w.err
		case <-time.After(delay):
			delay = min(2*delay, 800*time.Millisecond)
		}
	}
}

// ReadFrom implements io.ReaderFrom with a large buffer.
func (w *FileWriter) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, 1<<20)
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return total, werr
			}
			total += int64(n)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}
