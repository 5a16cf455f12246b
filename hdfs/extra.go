package hdfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
)

// AppendFile implements fs.Appender.
func (c *Client) AppendFile(ctx context.Context, p string) (io.WriteCloser, error) {
	return c.Append(ctx, p)
}

// WaitReplicated implements fs.Replicator: it polls until every block of
// p has n replicas.
func (c *Client) WaitReplicated(ctx context.Context, p string, n int) error {
	for {
		locs, err := c.BlockLocations(ctx, p)
		if err != nil {
			return err
		}
		ok := true
		for _, b := range locs {
			if len(b.Hosts) != n {
				ok = false
			}
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Truncate implements fs.Truncater with HDFS truncate: done is true when
// size falls on a block boundary (or the file is already that long);
// otherwise the DataNodes cut the last block in the background.
func (c *Client) Truncate(ctx context.Context, p string, size int64) (bool, error) {
	var resp hdfspb.TruncateResponseProto
	req := &hdfspb.TruncateRequestProto{Src: proto.String(p), NewLength: proto.Uint64(uint64(size)), ClientName: proto.String(c.name)}
	if err := c.call(ctx, "truncate", req, &resp); err != nil {
		return false, pathErr("truncate", p, err)
	}
	return resp.GetResult(), nil
}

// WaitTruncated implements fs.Truncater: it waits until p is closed again
// after a truncate that was not done at once.
func (c *Client) WaitTruncated(ctx context.Context, p string) error {
	for {
		lbs, err := c.blockLocations(ctx, p)
		if err != nil {
			return err
		}
		if !lbs.GetUnderConstruction() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// FileChecksum implements fs.Checksummer: HDFS's MD5-of-MD5-of-CRC32C,
// from each block's checksum as one of its DataNodes computes it.
func (c *Client) FileChecksum(ctx context.Context, p string) (fs.FileChecksum, error) {
	lbs, err := c.blockLocations(ctx, p)
	if err != nil {
		return fs.FileChecksum{}, err
	}
	var md5s [][]byte
	var firstCRCs int64 // the first block's CRC count, which names the algorithm
	bpc := 512
	refetched := false
	blocks := lbs.GetBlocks()
	for i := 0; i < len(blocks); i++ {
		lb := blocks[i]
		var last error
		done := false
		tokenRefused := false
		for _, loc := range lb.GetLocs() {
			conn, err := c.dial(ctx, loc, lb.GetBlockToken())
			if err != nil {
				if errors.Is(err, datatransfer.ErrAccessToken) && !refetched {
					last, tokenRefused = err, true
					break
				}
				last = err
				continue
			}
			resp, err := datatransfer.BlockChecksum(ctx, conn, lb.GetB(), lb.GetBlockToken())
			conn.Close()
			if err != nil {
				last = err
				if errors.Is(err, datatransfer.ErrAccessToken) && !refetched {
					tokenRefused = true
					break
				}
				continue
			}
			md5s = append(md5s, resp.GetBlockChecksum())
			if len(md5s) == 1 {
				firstCRCs = int64(resp.GetCrcPerBlock())
			}
			bpc = int(resp.GetBytesPerCrc())
			done = true
			break
		}
		if tokenRefused {
			// The token expired or its key rolled away: new locations
			// bring new tokens (once, as Hadoop's FileChecksumHelper).
			refetched = true
			lbs, err := c.blockLocations(ctx, p)
			if err != nil {
				return fs.FileChecksum{}, err
			}
			if blocks = lbs.GetBlocks(); i >= len(blocks) {
				return fs.FileChecksum{}, &os.PathError{Op: "checksum", Path: p, Err: fmt.Errorf("the file changed while its checksum was computed")}
			}
			i--
			continue
		}
		if !done {
			return fs.FileChecksum{}, &os.PathError{Op: "checksum", Path: p, Err: fmt.Errorf("no DataNode could checksum blk_%d: %v", lb.GetB().GetBlockId(), last)}
		}
	}
	crcPerBlock := int64(0) // Hadoop names single-block files "MD5-of-0MD5-..."
	if len(md5s) > 1 {
		crcPerBlock = firstCRCs
	}
	return fs.FileChecksum{
		Algorithm: datatransfer.FileChecksumAlgorithm(crcPerBlock, bpc, hdfspb.ChecksumTypeProto_CHECKSUM_CRC32C),
		Bytes:     datatransfer.FileChecksumMD5(md5s),
	}, nil
}

// StorageStatus implements fs.StorageStatuser from the DataNodes' storage
// reports.
func (c *Client) StorageStatus(ctx context.Context) (map[string]fs.FsStatus, error) {
	var rep hdfspb.GetDatanodeStorageReportResponseProto
	if err := c.call(ctx, "getDatanodeStorageReport", &hdfspb.GetDatanodeStorageReportRequestProto{Type: hdfspb.DatanodeReportTypeProto_LIVE.Enum()}, &rep); err != nil {
		return nil, wrapErr(err)
	}
	out := map[string]fs.FsStatus{}
	for _, d := range rep.GetDatanodeStorageReports() {
		for _, s := range d.GetStorageReports() {
			if s.GetFailed() {
				continue
			}
			t := storage.Type(s.GetStorage().GetStorageType()).String()
			st := out[t]
			st.Capacity += int64(s.GetCapacity())
			st.Used += int64(s.GetDfsUsed())
			st.Remaining += int64(s.GetRemaining())
			out[t] = st
		}
	}
	return out, nil
}

var (
	_ fs.Appender        = (*Client)(nil)
	_ fs.Replicator      = (*Client)(nil)
	_ fs.Truncater       = (*Client)(nil)
	_ fs.Checksummer     = (*Client)(nil)
	_ fs.StorageStatuser = (*Client)(nil)
)

// LiveDataNodes returns the number of DataNodes the NameNode considers live.
func (c *Client) LiveDataNodes(ctx context.Context) (int, error) {
	var resp hdfspb.GetDatanodeReportResponseProto
	if err := c.call(ctx, "getDatanodeReport", &hdfspb.GetDatanodeReportRequestProto{Type: hdfspb.DatanodeReportTypeProto_LIVE.Enum()}, &resp); err != nil {
		return 0, wrapErr(err)
	}
	return len(resp.GetDi()), nil
}

// FileBlockLocations implements fs.BlockLocator: each block with the IPs
// of the DataNodes holding it.
func (c *Client) FileBlockLocations(ctx context.Context, p string) ([]fs.BlockLocation, error) {
	locs, err := c.BlockLocations(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]fs.BlockLocation, len(locs))
	for i, b := range locs {
		out[i] = fs.BlockLocation{Offset: b.Offset, Length: b.Length}
		for _, h := range b.Hosts {
			host, _, err := net.SplitHostPort(h)
			if err != nil {
				host = h
			}
			out[i].Hosts = append(out[i].Hosts, host)
		}
	}
	return out, nil
}

var _ fs.BlockLocator = (*Client)(nil)
var _ fs.ExactRenamer = (*Client)(nil)
