package datanode

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/webhdfs"
)

// The DataNode's half of WebHDFS: the operations the NameNode redirects
// here (OPEN, CREATE, APPEND, GETFILECHECKSUM) run through an HDFS client
// acting as the request's user.name, so the NameNode checks permissions
// and data goes through the ordinary write pipeline and read path. The
// client always talks to this DataNode's own NameNode; the
// namenoderpcaddress parameter the NameNode adds is accepted for Hadoop
// compatibility and not dialled.
//
// Every operation needs the NameNode's signature on the redirect that
// brought the client here (blocktoken.RedirectParam, strata.token): a
// token for the request's user.name, operation and path, checked with the
// block keys the NameNode handed over. So the DataNode's WebHDFS acts only
// for requests the NameNode approved, and cannot be used to reach a
// NameNode the caller could not reach itself. A request without a valid
// one is answered 403 with Hadoop's SecretManager$InvalidToken
// RemoteException. (A NameNode that hands over no block keys at all signs
// no redirects; its DataNodes then serve redirected requests unsigned, as
// before block keys existed.)
//
// In secure mode a request must also carry delegation=, which the
// NameNode's redirect always adds there (the caller's token or one issued
// to it): the client's only credential towards the NameNode is that token
// (SASL TOKEN), so the NameNode sees the token's owner, never the
// DataNode's own principal acting for a name. Without one the request is
// refused with 401.

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

// idleTimeout bounds how long a client may send or take no data mid-
// operation (Hadoop's DataNode socket timeout, dfs.client.socket-timeout,
// 60 s): one that stalls fails the operation rather than holding its
// file, lease and NameNode connection for ever (the HTTP server itself
// only times out request headers).
const idleTimeout = 60 * time.Second

// idleWriter is w with each Write bounded by idleTimeout.
type idleWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (iw idleWriter) Write(p []byte) (int, error) {
	iw.rc.SetWriteDeadline(time.Now().Add(idleTimeout))
	return iw.w.Write(p)
}

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

// classInvalidToken is the exception a refused redirect token is
// reported as, Hadoop's.
const classInvalidToken = "org.apache.hadoop.security.token.SecretManager$InvalidToken"

// webRun runs op with a client acting as the request's user, once the
// redirect token is verified; in secure mode the client authenticates to
// the NameNode with the request's delegation token (delegation=, which
// the NameNode's redirect always carries then) and nothing else.
func (d *DataNode) webRun(op webDNOp, w http.ResponseWriter, hr *http.Request, r *webhdfs.Request) error {
	// An error reply comes after the operation, however long it took.
	rc := http.NewResponseController(w)
	defer rc.SetWriteDeadline(time.Now().Add(idleTimeout))
	// In secure mode the DataNode never acts on a name alone.
	secure := d.cfg.Security.Kerberos
	if secure && r.Delegation == nil {
		d.stats.TokenRefusals.Add(1)
		d.log.Warn("webhdfs: secure-mode request without a delegation token refused", "op", r.Op, "path", r.Path, "remote", hr.RemoteAddr)
		return ipc.Errorf(webhdfs.ClassSecurity, "Security enabled but user not authenticated by filter")
	}
	mode := blocktoken.Read
	if r.Op == "CREATE" || r.Op == "APPEND" {
		mode = blocktoken.Write
	}
	if err := d.checkRedirect(r.String(blocktoken.RedirectParam), r.User, r.Op, r.Path, mode); err != nil {
		d.stats.TokenRefusals.Add(1)
		d.log.Warn("webhdfs: redirect token refused", "op", r.Op, "path", r.Path, "user", r.User, "remote", hr.RemoteAddr, "err", err)
		return ipc.Errorf(classInvalidToken, "%s", err.Error())
	}
	opts := hdfs.Options{Addrs: d.nameNodesActiveFirst(), User: r.User, Umask: noUmask, ShortCircuitSocket: d.cfg.DomainSocketPath,
		// OPEN reads this DataNode's own replicas straight from their
		// files (in-process, CRCs verified); with short-circuit reads
		// configured, other local DataNodes' too, as a local HDFS client
		// would.
		LocalReplicas:          d,
		DataTransferProtection: d.cfg.SASL.protection(), EncryptDataTransfer: d.cfg.SASL.Encrypt,
		DataTransferCipherSuites: d.cfg.SASL.CipherSuites}
	if secure {
		// The caller's token is the client's only credential: the
		// NameNode authenticates it (SASL TOKEN) as the token's owner.
		opts.Tokens = nameNodeTokens(*r.Delegation, opts.Addrs)
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
	if _, err := r.Int("buffersize", 0, 1, 1<<31-1); err != nil {
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
	iw := idleWriter{w, http.NewResponseController(w)}
	iw.rc.SetWriteDeadline(time.Now().Add(idleTimeout))
	w.WriteHeader(http.StatusOK)
	var src io.Reader = f // to the end: the reader's WriteTo hands over its read-ahead buffers
	if offset+n < size {
		src = io.LimitReader(f, n)
	}
	if copied, err := io.CopyBuffer(iw, src, make([]byte, copyBuffer)); err != nil || copied < n {
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
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(idleTimeout))
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
	if err := copyBody(w, fw, hr.Body); err != nil {
		fw.Close()
		if derr := c.Delete(ctx, r.Path, false); derr != nil {
			d.log.Warn("webhdfs: could not remove a partly written file", "path", r.Path, "err", derr)
		}
		return err
	}
	if err := fw.Close(); err != nil {
		return err
	}
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(idleTimeout))
	// The file's URI, escaped as Java's java.net.URI writes it.
	w.Header().Set("Location", (&url.URL{Scheme: "hdfs", Host: d.cfg.NameNodeAddr, Path: r.Path}).String())
	webhdfs.WriteEmpty(w, http.StatusCreated)
	return nil
}

// webAppend streams the request body onto the end of the file. If the
// body breaks off, the file is truncated back to its old length.
func (d *DataNode) webAppend(ctx context.Context, c *hdfs.Client, w http.ResponseWriter, hr *http.Request, r *webhdfs.Request) error {
	if _, err := r.Int("buffersize", 0, 1, 1<<31-1); err != nil {
		return err
	}
	fw, err := c.Append(ctx, r.Path)
	if err != nil {
		return err
	}
	// The length to go back to, read once the lease is held so that no
	// other writer's append can fall in between.
	st, err := c.Stat(ctx, r.Path)
	if err != nil {
		fw.Close()
		return err
	}
	if err := copyBody(w, fw, hr.Body); err != nil {
		fw.Close()
		done, terr := c.Truncate(ctx, r.Path, st.Length)
		if terr == nil && !done {
			// The NameNode finishes the truncation whether or not this
			// waits; bound the wait so that the answer does come.
			wctx, cancel := context.WithTimeout(ctx, idleTimeout)
			terr = c.WaitTruncated(wctx, r.Path)
			cancel()
		}
		if terr != nil {
			d.log.Warn("webhdfs: could not truncate a broken append back", "path", r.Path, "length", st.Length, "err", terr)
		}
		return err
	}
	if err := fw.Close(); err != nil {
		return err
	}
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(idleTimeout))
	webhdfs.WriteEmpty(w, http.StatusOK)
	return nil
}

// copyBody streams body, w's request body, into fw in large chunks (the
// writer cuts them into packets); a body that ends early (shorter than its
// Content-Length, or a broken chunked encoding) or stalls for idleTimeout
// is an error, not the end of the data.
func copyBody(w http.ResponseWriter, fw *hdfs.FileWriter, body io.Reader) error {
	rc := http.NewResponseController(w)
	defer rc.SetReadDeadline(time.Time{})
	buf := make([]byte, copyBuffer)
	for {
		n := 0
		var rerr error
		for n < len(buf) && rerr == nil {
			var m int
			rc.SetReadDeadline(time.Now().Add(idleTimeout))
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
			return fmt.Errorf("reading the request body: %w", rerr)
		}
	}
}

// nameNodeTokens is t made an HDFS delegation token for each NameNode
// address the client may dial, as Hadoop's DataNode does
// (SecurityUtil.setTokenService): the kind and service are not covered by
// the token's password, so the copy authenticates exactly as the
// original, and the client selects it whatever form the address took.
func nameNodeTokens(t delegation.Token, addrs []string) []delegation.Token {
	out := make([]delegation.Token, 0, len(addrs))
	for _, a := range addrs {
		c := t
		c.Kind, c.Service = delegation.Kind, ipc.TokenService(a)
		out = append(out, c)
	}
	return out
}
