package hdfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
)

// FileReader reads an HDFS file. Each block is read from one replica;
// when a DataNode fails or sends data that fails its checksum, the reader
// switches to another replica (reporting the corrupt one to the NameNode)
// and goes on. It implements io.Reader, io.ReaderAt, io.Seeker,
// io.WriterTo and io.Closer. Not safe for concurrent use except ReadAt.
type FileReader struct {
	c      *Client
	ctx    context.Context
	path   string
	length int64
	blocks []*hdfspb.LocatedBlockProto

	pos int64
	cur *prefetcher // the current block's stream, read ahead
	// curCleanup closes cur if the reader is dropped without Close: its
	// goroutine would otherwise wait forever with the connection open.
	curCleanup runtime.Cleanup
	curEnd     int64 // file offset where cur's block ends
	curLoc     *hdfspb.DatanodeInfoProto
	curLB      *hdfspb.LocatedBlockProto
	dead       map[string]bool // DataNodes that failed this reader
	closed     bool
}

// Open implements fs.FileSystem.
func (c *Client) Open(ctx context.Context, p string) (fs.File, error) {
	return c.OpenFile(ctx, p)
}

// OpenFile opens p for reading.
func (c *Client) OpenFile(ctx context.Context, p string) (*FileReader, error) {
	lbs, err := c.blockLocations(ctx, p)
	if err != nil {
		return nil, err
	}
	return &FileReader{c: c, ctx: ctx, path: p, length: int64(lbs.GetFileLength()), blocks: lbs.GetBlocks(), dead: map[string]bool{}}, nil
}

func (c *Client) blockLocations(ctx context.Context, p string) (*hdfspb.LocatedBlocksProto, error) {
	var resp hdfspb.GetBlockLocationsResponseProto
	req := &hdfspb.GetBlockLocationsRequestProto{Src: proto.String(p), Offset: proto.Uint64(0), Length: proto.Uint64(1 << 62)}
	if err := c.call(ctx, "getBlockLocations", req, &resp); err != nil {
		return nil, pathErr("open", p, err)
	}
	if resp.Locations == nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: os.ErrNotExist}
	}
	return resp.Locations, nil
}

// Length is the file's length when it was opened.
func (r *FileReader) Length() int64 { return r.length }

func (r *FileReader) blockAt(off int64) *hdfspb.LocatedBlockProto {
	for _, lb := range r.blocks {
		start := int64(lb.GetOffset())
		if off >= start && off < start+int64(lb.GetB().GetNumBytes()) {
			return lb
		}
	}
	return nil
}

func dnAddr(d *hdfspb.DatanodeInfoProto) string {
	return net.JoinHostPort(d.GetId().GetIpAddr(), fmt.Sprint(d.GetId().GetXferPort()))
}

// dialAddr is the transfer address the client connects to: the DataNode's
// host name with Options.UseDatanodeHostname (Hadoop's
// dfs.client.use.datanode.hostname, for clients that cannot route to the
// addresses DataNodes report, e.g. behind NAT), else its IP address.
func (c *Client) dialAddr(d *hdfspb.DatanodeInfoProto) string {
	if h := d.GetId().GetHostName(); c.opts.UseDatanodeHostname && h != "" {
		return net.JoinHostPort(h, fmt.Sprint(d.GetId().GetXferPort()))
	}
	return dnAddr(d)
}

// openBlock starts reading [off, end) of the file, end within the block
// holding off, from the first replica that answers. Failed replicas are
// remembered; one refresh of the block locations is tried when all failed.
func (r *FileReader) openBlock(ctx context.Context, off, end int64) (io.ReadCloser, *hdfspb.LocatedBlockProto, *hdfspb.DatanodeInfoProto, error) {
	var lastErr error
	tokenRefreshed := false
rounds:
	for attempt := 0; attempt < 2; attempt++ {
		lb := r.blockAt(off)
		if lb == nil {
			return nil, nil, nil, fmt.Errorf("hdfs: %s: no block at offset %d", r.path, off)
		}
		inBlock := off - int64(lb.GetOffset())
		if len(lb.GetLocs()) == 0 {
			lastErr = fmt.Errorf("the NameNode lists no replica of blk_%d (it may be being recovered)", lb.GetB().GetBlockId())
		}
		if lr, loc := r.openInProcess(lb, inBlock, end-off); lr != nil {
			return lr, lb, loc, nil
		}
		for _, loc := range lb.GetLocs() {
			uuid := loc.GetId().GetDatanodeUuid()
			if r.dead[uuid] {
				continue
			}
			rc, err := r.openReplica(ctx, loc, lb, inBlock, end-off, tokenRefreshed)
			if err == nil {
				return rc, lb, loc, nil
			}
			if errors.Is(err, datatransfer.ErrAccessToken) && !tokenRefreshed {
				// The token expired (or its key rolled away; the
				// refusal may come from the SASL handshake): new
				// locations bring new tokens; the replica is fine.
				tokenRefreshed = true
				if err := r.refreshLocations(ctx); err != nil {
					return nil, nil, nil, err
				}
				attempt-- // not a failed round
				continue rounds
			}
			lastErr = fmt.Errorf("%s: %w", r.c.dialAddr(loc), err)
			r.dead[uuid] = true
		}
		// Every known replica failed: ask the NameNode again, once.
		if err := r.refreshLocations(ctx); err != nil {
			return nil, nil, nil, err
		}
		clear(r.dead)
		if attempt == 0 {
			time.Sleep(500 * time.Millisecond)
		}
	}
	lb := r.blockAt(off)
	name := ""
	if lb != nil {
		name = fmt.Sprintf("BP:blk_%d_%d", lb.GetB().GetBlockId(), lb.GetB().GetGenerationStamp())
	}
	return nil, nil, nil, &os.PathError{Op: "read", Path: r.path, Err: fmt.Errorf("Could not obtain block: %s file=%s: no live DataNode answered (last error: %v)", name, r.path, lastErr)}
}

// openReplica opens [off, off+n) of the block on one replica: by
// short-circuit when it is local, else (or when that fails) over data
// transfer. A short-circuit refusal of the block token, before the tokens
// were refreshed, is returned as is: it needs a valid READ token as well,
// and the DataNode would refuse the same token.
func (r *FileReader) openReplica(ctx context.Context, loc *hdfspb.DatanodeInfoProto, lb *hdfspb.LocatedBlockProto, off, n int64, tokenRefreshed bool) (io.ReadCloser, error) {
	lr, err := r.c.openLocal(loc, lb, off, n)
	if err == nil {
		return lr, nil
	}
	if errors.Is(err, datatransfer.ErrAccessToken) && !tokenRefreshed {
		return nil, err
	}
	conn, err := r.c.dial(ctx, loc, lb.GetBlockToken())
	if err != nil {
		return nil, err
	}
	br, err := datatransfer.NewBlockReader(ctx, conn, r.c.name, lb.GetB(), lb.GetBlockToken(), off, n)
	if err != nil {
		return nil, err
	}
	return br, nil
}

// refreshLocations asks the NameNode for the file's block locations again.
func (r *FileReader) refreshLocations(ctx context.Context) error {
	lbs, err := r.c.blockLocations(ctx, r.path)
	if err != nil {
		return err
	}
	r.blocks = lbs.GetBlocks()
	return nil
}

// reportChecksum tells the NameNode a replica failed its checksum.
func (r *FileReader) reportChecksum(lb *hdfspb.LocatedBlockProto, loc *hdfspb.DatanodeInfoProto) {
	bad := &hdfspb.LocatedBlockProto{B: lb.GetB(), Offset: lb.Offset, Corrupt: proto.Bool(false), BlockToken: lb.GetBlockToken(), Locs: []*hdfspb.DatanodeInfoProto{loc}}
	for i, l := range lb.GetLocs() {
		if l.GetId().GetDatanodeUuid() == loc.GetId().GetDatanodeUuid() && i < len(lb.GetStorageIDs()) {
			bad.StorageIDs = []string{lb.GetStorageIDs()[i]}
			bad.StorageTypes = []hdfspb.StorageTypeProto{lb.GetStorageTypes()[i]}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.c.call(ctx, "reportBadBlocks", &hdfspb.ReportBadBlocksRequestProto{Blocks: []*hdfspb.LocatedBlockProto{bad}}, &hdfspb.ReportBadBlocksResponseProto{})
}

// failed handles a read error from a replica: remember the node, report
// a checksum failure.
func (r *FileReader) failed(lb *hdfspb.LocatedBlockProto, loc *hdfspb.DatanodeInfoProto, err error) {
	r.dead[loc.GetId().GetDatanodeUuid()] = true
	if errors.Is(err, datatransfer.ErrChecksum) {
		r.reportChecksum(lb, loc)
	}
}

// Read implements io.Reader.
func (r *FileReader) Read(p []byte) (int, error) {
	if len(p) == 0 && !r.closed && r.pos < r.length {
		return 0, nil
	}
	data, err := r.view(len(p))
	n := copy(p, data)
	r.advance(n)
	fs.CountRead("hdfs", n)
	return n, err
}

// view returns up to max verified bytes at the read position without
// copying them (they stay valid until the next view, advance or Close),
// opening blocks and failing over between replicas as needed; nothing
// and io.EOF at the end of the file.
func (r *FileReader) view(max int) ([]byte, error) {
	if r.closed {
		return nil, os.ErrClosed
	}
	if r.pos >= r.length {
		return nil, io.EOF
	}
	for tries := 0; ; tries++ {
		if r.cur == nil {
			lb := r.blockAt(r.pos)
			if lb == nil {
				return nil, fmt.Errorf("hdfs: %s: no block at offset %d of %d", r.path, r.pos, r.length)
			}
			end := int64(lb.GetOffset()) + int64(lb.GetB().GetNumBytes())
			br, lb, loc, err := r.openBlock(r.ctx, r.pos, end)
			if err != nil {
				return nil, err
			}
			r.setCur(newPrefetcher(br, r.c.readAhead()))
			r.curLB, r.curLoc, r.curEnd = lb, loc, end
		}
		data, err := r.cur.view()
		if len(data) > 0 {
			return data[:min(int64(len(data)), int64(max), r.curEnd-r.pos)], nil
		}
		r.closeCur()
		if err == io.EOF {
			if r.pos >= r.length {
				return nil, io.EOF
			}
			if r.pos < r.curEnd {
				// The replica ended before the block did.
				err = fmt.Errorf("hdfs: %s: replica of blk_%d ended at file offset %d, before %d: %w",
					r.path, r.curLB.GetB().GetBlockId(), r.pos, r.curEnd, io.ErrUnexpectedEOF)
			} else {
				continue
			}
		}
		r.failed(r.curLB, r.curLoc, err)
		if tries > 8 {
			return nil, err
		}
	}
}

// setCur makes p the current stream.
func (r *FileReader) setCur(p *prefetcher) {
	r.cur = p
	r.curCleanup = runtime.AddCleanup(r, func(p *prefetcher) { p.Close() }, p)
}

// closeCur closes the current stream, if any.
func (r *FileReader) closeCur() {
	if r.cur != nil {
		r.curCleanup.Stop()
		r.cur.Close()
		r.cur = nil
	}
}

// advance consumes n bytes of the last view; the block's stream is closed
// once its last byte is consumed.
func (r *FileReader) advance(n int) {
	if n == 0 {
		return
	}
	r.cur.consume(n)
	r.pos += int64(n)
	if r.pos >= r.curEnd {
		r.closeCur()
	}
}

// ReadAt implements io.ReaderAt. It opens its own connections, so it may
// run concurrently with other ReadAt calls.
func (r *FileReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.readAt(p, off)
	fs.CountRead("hdfs", n)
	return n, err
}

func (r *FileReader) readAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fs.ErrInvalid
	}
	read := 0
	for read < len(p) {
		pos := off + int64(read)
		if pos >= r.length {
			return read, io.EOF
		}
		lb := r.blockAt(pos)
		if lb == nil {
			return read, fmt.Errorf("hdfs: %s: no block at offset %d", r.path, pos)
		}
		end := min(int64(lb.GetOffset())+int64(lb.GetB().GetNumBytes()), off+int64(len(p)))
		n, err := r.readRange(p[read:read+int(end-pos)], pos, end)
		read += n
		if err != nil {
			return read, err
		}
	}
	return read, nil
}

// readRange fills p with [pos, end) of one block, failing over between
// replicas.
func (r *FileReader) readRange(p []byte, pos, end int64) (int, error) {
	dead := map[string]bool{}
	var lastErr error
	for tries := 0; tries < 8; tries++ {
		saved := r.dead
		r.dead = dead
		br, lb, loc, err := r.openBlock(r.ctx, pos, end)
		r.dead = saved
		if err != nil {
			return 0, err
		}
		n, err := io.ReadFull(br, p)
		br.Close()
		if err == nil {
			return n, nil
		}
		dead[loc.GetId().GetDatanodeUuid()] = true
		if errors.Is(err, datatransfer.ErrChecksum) {
			r.reportChecksum(lb, loc)
		}
		lastErr = err
	}
	return 0, lastErr
}

// Seek implements io.Seeker.
func (r *FileReader) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += r.pos
	case io.SeekEnd:
		off += r.length
	}
	if off < 0 {
		return r.pos, fs.ErrInvalid
	}
	if r.cur != nil && off > r.pos && off < r.curEnd && off-r.pos <= int64(r.c.readAhead()) {
		// A short skip forward within the block: read past the bytes
		// (most are read ahead already) rather than reconnect.
		for r.pos < off {
			data, err := r.view(int(min(off-r.pos, maxChunk)))
			if err != nil || len(data) == 0 {
				break
			}
			r.advance(len(data))
		}
	}
	if off != r.pos {
		r.closeCur()
	}
	r.pos = off
	return off, nil
}

// WriteTo implements io.WriterTo, handing w the read-ahead buffers
// themselves (no copy into an intermediate buffer).
func (r *FileReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		data, err := r.view(maxChunk)
		if len(data) > 0 {
			m, werr := w.Write(data)
			r.advance(m)
			fs.CountRead("hdfs", m)
			total += int64(m)
			if werr != nil {
				return total, werr
			}
			continue
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// Close implements io.Closer.
func (r *FileReader) Close() error {
	if r.cur != nil {
		r.closeCur()
	}
	r.closed = true
	return nil
}

// BlockLocation is where one block of a file lives.
type BlockLocation struct {
	Offset, Length int64
	BlockID        uint64
	GenStamp       uint64
	// Hosts are the DataNodes' host:port transfer addresses, in the
	// NameNode's order for this client (closest first).
	Hosts        []string
	DatanodeIDs  []string
	StorageTypes []storage.Type
	StorageIDs   []string
	// Corrupt is set when every listed replica is corrupt.
	Corrupt bool
}

// BlockLocations lists the blocks of p and their replicas.
func (c *Client) BlockLocations(ctx context.Context, p string) ([]BlockLocation, error) {
	lbs, err := c.blockLocations(ctx, p)
	if err != nil {
		return nil, err
	}
	var out []BlockLocation
	for _, lb := range lbs.GetBlocks() {
		bl := BlockLocation{Offset: int64(lb.GetOffset()), Length: int64(lb.GetB().GetNumBytes()), BlockID: lb.GetB().GetBlockId(),
			GenStamp: lb.GetB().GetGenerationStamp(), Corrupt: lb.GetCorrupt(), StorageIDs: lb.GetStorageIDs()}
		for i, loc := range lb.GetLocs() {
			bl.Hosts = append(bl.Hosts, dnAddr(loc))
			bl.DatanodeIDs = append(bl.DatanodeIDs, loc.GetId().GetDatanodeUuid())
			if i < len(lb.GetStorageTypes()) {
				bl.StorageTypes = append(bl.StorageTypes, storage.Type(lb.GetStorageTypes()[i]))
			}
		}
		out = append(out, bl)
	}
	return out, nil
}
