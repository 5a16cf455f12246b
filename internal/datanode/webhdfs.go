package datanode

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/webhdfs"
)

// The DataNode's half of WebHDFS: the operations the NameNode redirects
// here (OPEN, CREATE, APPEND, GETFILECHECKSUM) run through an HDFS client
// acting as the request's user.name, so the NameNode checks permissions
// and data goes through the ordinary write pipeline and read path. The
// client always talks to this DataNode's own NameNode; the
// namenoderpcaddress parameter the NameNode adds is accepted for Hadoop
// compatibility and not dialled.

type webDNOp func(d *DataNode, ctx context.Context, c *hdfs.Client, w http.ResponseWriter, hr *http.Request, r *webhdfs.Request) error

var webDNOps = map[string]webDNOp{
	"GET OPEN":            (*DataNode).webOpen,
	"GET GETFILECHECKSUM": (*DataNode).webChecksum,
	"PUT CREATE":          (*DataNode).webCreate,
	"POST APPEND":         (*DataNode).webAppend,
}

// noUmask is a umask that changes no HDFS permission bit (they stop at
// the sticky bit, 01000): WebHDFS applies the permission parameter as
// given, and hdfs.Options treats a zero umask as the default one.
const noUmask = 0o4000

// copyBuffer is the chunk size data is streamed in.
const copyBuffer = 1 << 20

// webhdfs serves /webhdfs/v1/.
func (d *DataNode) webhdfs() http.Handler {
	ops := map[string]webhdfs.Op{}
	for key, op := range webDNOps {
		ops[key] = func(w http.ResponseWriter, hr *http.Request, r *webhdfs.Request) error {
			return d.webRun(op, w, hr, r)
		}
	}
	return webhdfs.Handler(ops)
}

// webRun runs op with a client for the request's user and CREATE's block
// size and replication.
func (d *DataNode) webRun(op webDNOp, w http.ResponseWriter, hr *http.Request, r *webhdfs.Request) error {
	// With short-circuit reads configured, OPEN reads local replicas
	// straight from their files, as a local HDFS client would.
	opts := hdfs.Options{Addr: d.cfg.NameNodeAddr, User: r.User, Umask: noUmask, ShortCircuitSocket: d.cfg.DomainSocketPath}
	if r.Op == "CREATE" {
		cp, err := r.CreateParams()
		if err != nil {
			return err
		}
		opts.BlockSize, opts.Replication = cp.BlockSize, cp.Replication
	}
	c, err := hdfs.New(opts)
	if err != nil {
		return err
	}
	defer c.Close()
	// The operation runs in the DataNode's lifetime, not the request's: a
	// client that goes away shows as a failed body read or response
	// write, and a write it completed is still closed properly.
	return op(d, d.ctx, c, w, hr, r)
}

func (d *DataNode) webOpen(ctx context.Context, c *hdfs.Client, w http.ResponseWriter, hr *http.Request, r *webhdfs.Request) error {
	offset, err := r.Int("offset", 0, 0, 1<<62)
	if err != nil {
		return err
	}
	length, err := r.Int("length", -1, 0, 1<<62)
	if err != nil {
		return err
	}
	f, err := c.OpenFile(ctx, r.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	size := f.Length()
	if offset > size {
		return fmt.Errorf("Offset=%d out of the range [0, %d); OPEN, path=%s", offset, size, r.Path)
	}
	n := size - offset
	if length >= 0 {
		n = min(n, length)
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	w.WriteHeader(http.StatusOK)
	if copied, err := io.CopyBuffer(w, io.LimitReader(f, n), make([]byte, copyBuffer)); err != nil || copied < n {
		// The status is sent: cut the response short so the reader sees
		// less than Content-Length rather than silently short data.
		d.log.Warn("webhdfs: OPEN failed mid-stream", "path", r.Path, "sent", copied, "of", n, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

func (d *DataNode) webChecksum(ctx context.Context, c *hdfs.Client, w http.ResponseWriter, hr *http.Request, r *webhdfs.Request) error {
	sum, err := c.FileChecksum(ctx, r.Path)
	if err != nil {
		return err
	}
	fc, err := checksumJSON(sum)
	if err != nil {
		return err
	}
	webhdfs.WriteJSON(w, http.StatusOK, map[string]webhdfs.FileChecksum{"FileChecksum": fc})
	return nil
}

// checksumJSON serializes an MD5-of-MD5-of-CRC checksum as Hadoop's
// MD5MD5CRC32FileChecksum.write does: bytes per CRC (int32), CRCs per
// block (int64), then the MD5, all big-endian.
func checksumJSON(sum fs.FileChecksum) (webhdfs.FileChecksum, error) {
	var crcPerBlock int64
	var bytesPerCRC int32
	if _, err := fmt.Sscanf(sum.Algorithm, "MD5-of-%dMD5-of-%d", &crcPerBlock, &bytesPerCRC); err != nil {
		return webhdfs.FileChecksum{}, fmt.Errorf("unexpected checksum algorithm %q: %v", sum.Algorithm, err)
	}
	b := binary.BigEndian.AppendUint32(nil, uint32(bytesPerCRC))
	b = binary.BigEndian.AppendUint64(b, uint64(crcPerBlock))
	b = append(b, sum.Bytes...)
	return webhdfs.FileChecksum{Algorithm: sum.Algorithm, Bytes: hex.EncodeToString(b), Length: len(b)}, nil
}

// webCreate creates the file and streams the request body into it,
// answering 201 with the file's hdfs:// URI once the file is closed (its
// data acknowledged by the pipeline and the file complete on the
// NameNode). If the body breaks off, the partial file is removed.
func (d *DataNode) webCreate(ctx context.Context, c *hdfs.Client, w http.ResponseWriter, hr *http.Request, r *webhdfs.Request) error {
	cp, err := r.CreateParams()
	if err != nil {
		return err
	}
	fw, err := c.CreateFile(ctx, r.Path, fs.CreateOptions{
		Overwrite: cp.Overwrite, Perm: cp.Perm, Replication: cp.Replication, BlockSize: cp.BlockSize, CreateParent: true,
	})
	if err != nil {
		return err
	}
	if cp.Perm == 0 {
		// CreateOptions reads a zero Perm as "default": set 000 explicitly.
		if err := c.SetPermission(ctx, r.Path, 0); err != nil {
			fw.Close()
			return err
		}
	}
	if err := copyBody(fw, hr.Body); err != nil {
		fw.Close()
		c.Delete(ctx, r.Path, false)
		return err
	}
	if err := fw.Close(); err != nil {
		return err
	}
	w.Header().Set("Location", "hdfs://"+d.cfg.NameNodeAddr+r.Path)
	webhdfs.WriteEmpty(w, http.StatusCreated)
	return nil
}

// webAppend streams the request body onto the end of the file. If the
// body breaks off, the file is truncated back to its old length.
func (d *DataNode) webAppend(ctx context.Context, c *hdfs.Client, w http.ResponseWriter, hr *http.Request, r *webhdfs.Request) error {
	if _, err := r.Int("buffersize", 0, 1, 1<<31-1); err != nil {
		return err
	}
	st, err := c.Stat(ctx, r.Path)
	if err != nil {
		return err
	}
	fw, err := c.Append(ctx, r.Path)
	if err != nil {
		return err
	}
	if err := copyBody(fw, hr.Body); err != nil {
		fw.Close()
		if done, terr := c.Truncate(ctx, r.Path, st.Length); terr == nil && !done {
			c.WaitTruncated(ctx, r.Path)
		}
		return err
	}
	if err := fw.Close(); err != nil {
		return err
	}
	webhdfs.WriteEmpty(w, http.StatusOK)
	return nil
}

// bodyError marks a failure to read the request body.
type bodyError struct{ err error }

func (e bodyError) Error() string { return "reading the request body: " + e.err.Error() }
func (e bodyError) Unwrap() error { return e.err }

// copyBody streams body into fw in large chunks (the writer cuts them
// into packets); a body that ends early (shorter than its Content-Length,
// or a broken chunked encoding) is an error, not the end of the data.
func copyBody(fw *hdfs.FileWriter, body io.Reader) error {
	buf := make([]byte, copyBuffer)
	for {
		n := 0
		var rerr error
		for n < len(buf) && rerr == nil {
			var m int
			m, rerr = body.Read(buf[n:])
			n += m
		}
		if n > 0 {
			if _, err := fw.Write(buf[:n]); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return bodyError{rerr}
		}
	}
}
