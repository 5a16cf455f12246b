package nfsgw

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	nfs "github.com/willscott/go-nfs"

	"github.com/stratafs/strata/hdfs"
)

// Options configure a Gateway. The zero value of a field means its default.
type Options struct {
	// StreamTimeout closes a file's HDFS output stream after this long
	// without WRITEs (nfs.stream.timeout; default 10 minutes, as Hadoop).
	StreamTimeout time.Duration
	// MaxPendingPerFile bounds the bytes of out-of-order WRITEs held in
	// memory for one file; a WRITE beyond it gets NFS3ERR_JUKEBOX (the
	// client retries). Default 32 MiB.
	MaxPendingPerFile int64
	// MaxPending bounds the bytes of out-of-order WRITEs held in memory
	// for all files together; a WRITE beyond it gets NFS3ERR_JUKEBOX.
	// Default 256 MiB.
	MaxPending int64
	// MaxOpenFiles bounds the HDFS output streams open at once (each
	// holds a lease, a DataNode pipeline and up to 8 MiB of recent data).
	// Opening one more closes the least recently used stream that buffers
	// nothing; when every one does, the WRITE gets NFS3ERR_JUKEBOX.
	// Default 256, as Hadoop's gateway.
	MaxOpenFiles int
	// StableWriteWait bounds how long a FILE_SYNC or DATA_SYNC WRITE ahead
	// of the file's end waits for the gap to fill (default 60 s), and a
	// COMMIT for pending data; then NFS3ERR_JUKEBOX.
	StableWriteWait time.Duration
	// CallTimeout bounds each NameNode call made for a request (default 60 s).
	CallTimeout time.Duration
	// IDs maps NFS uids and gids to HDFS user and group names (default:
	// the host's user database).
	IDs IDMapper
	// Exports says which hosts may connect and which may write
	// (nfs.exports.allowed.hosts; default DefaultExports, every host
	// read-write, as Hadoop's gateway).
	Exports *Exports
	// LookupAddr resolves a client's address for name entries of Exports
	// (default net.LookupAddr).
	LookupAddr func(addr string) ([]string, error)
	Logger     *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.StreamTimeout <= 0 {
		o.StreamTimeout = 10 * time.Minute
	}
	if o.MaxPendingPerFile <= 0 {
		o.MaxPendingPerFile = 32 << 20
	}
	if o.MaxPending <= 0 {
		o.MaxPending = 256 << 20
	}
	if o.MaxOpenFiles <= 0 {
		o.MaxOpenFiles = 256
	}
	if o.StableWriteWait <= 0 {
		o.StableWriteWait = 60 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 60 * time.Second
	}
	if o.IDs == nil {
		o.IDs = SystemIDs{}
	}
	if o.Exports == nil {
		o.Exports, _ = ParseExports(DefaultExports)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// ClientFactory returns an HDFS client acting as user. The gateway calls
// it once per user and closes the clients when it closes.
type ClientFactory func(user string) (*hdfs.Client, error)

// Gateway serves NFSv3 and MOUNT on the listeners given to Serve.
type Gateway struct {
	opts      Options
	log       *slog.Logger
	newClient ClientFactory
	ids       *idCache
	writes    *openFiles
	readers   *readers
	listings  *listings
	verf      [8]byte // write verifier: new on every start

	ctx     context.Context
	cancel  context.CancelFunc
	closing atomic.Bool // no new write streams

	mu     sync.Mutex
	users  map[string]*userFS
	lns    map[net.Listener]struct{}
	conns  map[*front]struct{}
	closed bool
	wg     sync.WaitGroup
}

// New returns a Gateway that reaches HDFS through clients from newClient.
func New(newClient ClientFactory, opts Options) (*Gateway, error) {
	if newClient == nil {
		return nil, errors.New("nfsgw: no client factory")
	}
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	g := &Gateway{
		opts: opts, log: opts.Logger, newClient: newClient, ids: newIDCache(opts.IDs),
		ctx: ctx, cancel: cancel,
		users: map[string]*userFS{}, lns: map[net.Listener]struct{}{}, conns: map[*front]struct{}{},
	}
	rand.Read(g.verf[:])
	g.writes = newOpenFiles(g)
	g.readers = newReaders()
	g.listings = newListings()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		g.writes.reap(ctx)
	}()
	return g, nil
}

// Serve runs a gateway on ln until ctx ends, then closes it: the
// one-call form for tools and tests.
func Serve(ctx context.Context, ln net.Listener, newClient ClientFactory, opts Options) error {
	g, err := New(newClient, opts)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { g.Close() })
	defer stop()
	err = g.Serve(ln)
	g.Close()
	return err
}

// access applies the export allowlist to a connection's peer.
func (g *Gateway) access(a net.Addr) (allowed, rw bool) {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return false, false
	}
	ip, ok := netip.AddrFromSlice(ta.IP)
	if !ok {
		return false, false
	}
	return g.opts.Exports.Access(ip, g.opts.LookupAddr)
}

// Serve accepts connections on ln until Close; it returns nil after Close.
// Each connection gets its own go-nfs server behind a front that reads
// the caller's credentials and serves WRITE, COMMIT and FSINFO itself.
func (g *Gateway) Serve(ln net.Listener) error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		ln.Close()
		return nil
	}
	g.lns[ln] = struct{}{}
	g.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			g.mu.Lock()
			closed := g.closed
			g.mu.Unlock()
			if closed {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return fmt.Errorf("nfsgw: accept: %w", err)
		}
		allowed, rw := g.access(c.RemoteAddr())
		if !allowed {
			g.log.Warn("nfs3: refused a connection from a host not in nfs.exports.allowed.hosts", "remote", c.RemoteAddr())
			c.Close()
			continue
		}
		f := newFront(g, c, rw)
		g.mu.Lock()
		if g.closed {
			g.mu.Unlock()
			c.Close()
			return nil
		}
		g.conns[f] = struct{}{}
		g.wg.Add(1)
		g.mu.Unlock()
		go func() {
			defer g.wg.Done()
			srv := &nfs.Server{Handler: &connHandler{g: g, f: f}, ID: g.verf, Context: g.ctx}
			srv.Serve(f.listener())
			f.Close()
			f.wait()
			g.mu.Lock()
			delete(g.conns, f)
			g.mu.Unlock()
		}()
	}
}

// Close stops serving, closes every open HDFS output stream (so data
// written so far is complete in HDFS) and the HDFS clients. Safe to call
// twice.
func (g *Gateway) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	g.closing.Store(true)
	for ln := range g.lns {
		ln.Close()
	}
	for f := range g.conns {
		f.Close()
	}
	g.mu.Unlock()
	g.writes.closeAll()
	g.cancel()
	g.wg.Wait()
	g.readers.expire(true)
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, u := range g.users {
		u.c.Close()
	}
	g.users = map[string]*userFS{}
	return nil
}

// fsFor returns the file system acting as user.
func (g *Gateway) fsFor(user string) (*userFS, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if u := g.users[user]; u != nil {
		return u, nil
	}
	if g.closed {
		return nil, errors.New("nfsgw: gateway closed")
	}
	c, err := g.newClient(user)
	if err != nil {
		return nil, fmt.Errorf("nfsgw: client for %s: %w", user, err)
	}
	u := newUserFS(g, user, c)
	g.users[user] = u
	return u, nil
}

// errNotSupp is returned where go-nfs passes an error through as the NFS
// status: NFS3ERR_NOTSUPP.
var errNotSupp = &nfs.NFSStatusError{NFSStatus: nfs.NFSStatusNotSupp}
