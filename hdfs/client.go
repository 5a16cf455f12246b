package hdfs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/nameservice"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/security"
)

// ClientProtocol is the Java name of the NameNode's client protocol.
const ClientProtocol = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

// Options configure a Client.
type Options struct {
	// Addr is the NameNode's RPC host:port; used when Addrs is empty.
	Addr string
	// Addrs are the RPC host:ports of every NameNode of an HA nameservice
	// (nameservice.Resolve); with more than one, NameNode calls fail over
	// among them as the package doc says. One address is the same as Addr.
	Addrs []string
	// Authority is the hdfs:// URI authority URI reports, e.g. the
	// nameservice id "ns1"; "" means Addr, or the first of Addrs.
	Authority string
	// FailoverMaxAttempts, FailoverSleepBase and FailoverSleepMax bound
	// and pace failovers (dfs.client.failover.max.attempts, 15;
	// dfs.client.failover.sleep.base.millis, 500 ms;
	// dfs.client.failover.sleep.max.millis, 15 s); RetryMaxAttempts bounds
	// retries on one NameNode after RetriableException
	// (dfs.client.retry.max.attempts, 10). 0 means the default, negative
	// none (a configured 0, as OptionsFrom reads it); they
	// matter only with several Addrs.
	FailoverMaxAttempts int
	FailoverSleepBase   time.Duration
	FailoverSleepMax    time.Duration
	RetryMaxAttempts    int
	// User is the user to act as; "" means fs.CurrentUser().
	User string
	// Umask is applied to permissions of new files and directories
	// (fs.permissions.umask-mode, default 022).
	Umask uint16
	// Replication and BlockSize for new files; 0 means the NameNode's
	// defaults (dfs.replication, dfs.blocksize).
	Replication int
	BlockSize   int64
	// ShortCircuitSocket enables short-circuit local reads: the
	// DataNodes' Unix socket path, "_PORT" standing for a DataNode's
	// transfer port (dfs.domain.socket.path, used when
	// dfs.client.read.shortcircuit is true).
	ShortCircuitSocket string
	// UseDatanodeHostname connects to DataNodes by the host names they
	// report rather than their IP addresses
	// (dfs.client.use.datanode.hostname, default false).
	UseDatanodeHostname bool
	// SocketTimeout is dfs.client.socket-timeout: a write pipeline waits
	// for each ack at most this long plus 5 s per pipeline node, then
	// takes the pipeline for failed and recovers it (Hadoop's
	// DataStreamer); an idle writer sends a heartbeat every half of it.
	// 0 means 60 s; negative means no timeout (the value 0 in the
	// configuration, as in Hadoop).
	SocketTimeout time.Duration
	// SocketWriteTimeout is dfs.datanode.socket.write.timeout as the
	// client uses it: one write to a pipeline's first DataNode may block
	// this long plus 5 s per pipeline node. 0 means 480 s; negative means
	// no timeout.
	SocketWriteTimeout time.Duration
	// DataTransferProtection is dfs.data.transfer.protection: the SASL
	// protection DataNode connections ask for, a comma-separated list of
	// authentication, integrity and privacy, most wanted first; "" is
	// none (sasl.go).
	DataTransferProtection string
	// EncryptDataTransfer is dfs.encrypt.data.transfer: authenticate to
	// DataNodes with the NameNode's data encryption keys, with privacy.
	// The NameNode's server defaults turn it on too.
	EncryptDataTransfer bool
	// DataTransferCipherSuites is dfs.encrypt.data.transfer.cipher.suites
	// (AES/CTR/NoPadding or "").
	DataTransferCipherSuites string
	// Login is the Kerberos login the NameNode connection authenticates
	// with in secure mode; nil means the process's (ipc.SetLogin). A
	// User other than the login's acts as that user, which the
	// NameNode's proxy-user rules must allow.
	Login *security.Login
	// Tokens, when set, are the NameNode connection's only credentials
	// (SASL TOKEN; no Kerberos login): the NameNode authenticates the
	// token's owner, who is the User. Each token's Service must name the
	// address it is for (ipc.TokenService of an Addrs entry, or the entry
	// itself). A DataNode's WebHDFS acting on a caller's delegation token
	// uses them.
	Tokens []delegation.Token
	// LocalReplicas, when set, opens the replicas the calling process
	// itself holds — a DataNode's own WebHDFS gateway reading through
	// this client: those reads skip the sockets and read the replica's
	// files directly, verifying every chunk's CRC as short-circuit reads
	// do. Other replicas are read as usual.
	LocalReplicas LocalReplicaOpener
	// ReadAhead is how many bytes a sequential reader fetches ahead of
	// its consumer, per open file (strata.client.read-ahead.bytes): the
	// network and checksum checks overlap with what the consumer does.
	// 0 means 4 MiB; it is rounded to whole 1 MiB chunks, at least one;
	// negative means none beyond the chunk being filled (one at a time).
	ReadAhead int
	// ServerDefaultsValidity is dfs.client.server-defaults.validity.period.ms
	// (default 1 h): how long the NameNode's server defaults are cached.
	ServerDefaultsValidity time.Duration
}

// Client is an HDFS client. It is safe for concurrent use.
type Client struct {
	opts  Options
	nn    nameNode
	uri   *url.URL
	name  string        // the client name the NameNode keys leases by
	renew time.Duration // between lease renewals
	// service names the tokens this client gets (tokenService).
	service string

	mu       sync.Mutex
	writers  int
	renewing chan struct{}
	encKey   *hdfspb.DataEncryptionKeyProto // the NameNode's, when it encrypts data transfer

	// The NameNode's server defaults, cached for ServerDefaultsValidity
	// (writer.go); a failed lookup is remembered until defaultsRetry, so
	// a NameNode that cannot answer is not asked at every dial.
	defaults        *hdfspb.FsServerDefaultsProto
	defaultsAt      time.Time
	defaultsErr     error
	defaultsRetry   time.Time
	defaultsBackoff time.Duration
	now             func() time.Time // time.Now unless a test sets it

	dialer    *datatransfer.Dialer // connects to DataNodes (sasl.go)
	encDialer *datatransfer.Dialer // dialer's replacement when the server defaults say encrypt
}

// nameNode is how the Client reaches the NameNode: one ipc.Client, or an
// ipc.FailoverClient over an HA nameservice's NameNodes.
type nameNode interface {
	Call(ctx context.Context, method string, req, resp proto.Message) error
	Close() error
}

// renewInterval is how often leases are renewed, well within the
// NameNode's soft limit (60 s).
const renewInterval = 20 * time.Second

// New returns a Client for the NameNode at opts.Addr, or the HA
// nameservice of opts.Addrs. It does not connect until the first call.
func New(opts Options) (*Client, error) {
	addrs := opts.Addrs
	if len(addrs) == 0 && opts.Addr != "" {
		addrs = []string{opts.Addr}
	}
	if len(addrs) == 0 {
		return nil, errors.New("hdfs: no NameNode address")
	}
	for _, a := range addrs {
		if a == "" {
			return nil, errors.New("hdfs: empty NameNode address")
		}
	}
	if opts.User == "" {
		opts.User = fs.CurrentUser()
	}
	if opts.Umask == 0 {
		opts.Umask = fs.DefaultUmask
	}
	if opts.Authority == "" {
		opts.Authority = addrs[0]
	}
	icfg := ipc.ClientConfig{Addr: addrs[0], User: opts.User, Protocol: ClientProtocol, ProtocolVersion: 1, Login: opts.Login,
		Tokens: opts.Tokens, TokenOnly: len(opts.Tokens) > 0}
	var nn nameNode
	if len(addrs) == 1 {
		nn = ipc.NewClient(icfg)
	} else {
		f, err := ipc.NewFailoverClient(ipc.FailoverConfig{
			Addrs: addrs, Client: icfg,
			MaxFailovers: opts.FailoverMaxAttempts, MaxRetries: opts.RetryMaxAttempts,
			SleepBase: opts.FailoverSleepBase, SleepMax: opts.FailoverSleepMax,
		})
		if err != nil {
			return nil, fmt.Errorf("hdfs: %w", err)
		}
		nn = f
	}
	b := make([]byte, 8)
	rand.Read(b)
	c := &Client{
		opts:  opts,
		nn:    nn,
		uri:   &url.URL{Scheme: "hdfs", Host: opts.Authority},
		name:  "DFSClient_NONMAPREDUCE_" + hex.EncodeToString(b),
		renew: renewInterval,

		service: tokenService(opts.Authority, addrs),
	}
	d, err := c.newDialer()
	if err != nil {
		nn.Close()
		return nil, fmt.Errorf("hdfs: %w", err)
	}
	c.dialer = d
	return c, nil
}

func init() {
	fs.Register("hdfs", func(ctx context.Context, u *url.URL, env fs.Env) (fs.FileSystem, error) {
		env = env.WithDefaults()
		opts, err := OptionsFrom(env.Conf, u.Host)
		if err != nil {
			return nil, err
		}
		opts.User = env.User
		return New(opts)
	})
}

// OptionsFrom returns the Options of hdfs://authority under c: the
// NameNodes the authority stands for (nameservice.Resolve: every member
// of an HA nameservice, else host[:8020]), the authority itself, the
// umask (fs.permissions.umask-mode), dfs.replication, dfs.blocksize,
// short-circuit reads (dfs.client.read.shortcircuit,
// dfs.domain.socket.path), the socket timeouts and the failover keys.
// User is left empty, meaning fs.CurrentUser().
func OptionsFrom(c *conf.Configuration, authority string) (Options, error) {
	addrs, err := nameservice.Resolve(c, authority)
	if err != nil {
		return Options{}, fmt.Errorf("hdfs: %w", err)
	}
	opts := Options{Addrs: addrs, Authority: authority, Umask: fs.Umask(c)}
	if v, err := c.GetInt("dfs.replication"); err == nil {
		opts.Replication = int(v)
	}
	if v, err := c.GetBytes("dfs.blocksize"); err == nil {
		opts.BlockSize = v
	}
	if on, _ := c.GetBool("dfs.client.read.shortcircuit"); on {
		opts.ShortCircuitSocket = c.Get("dfs.domain.socket.path")
	}
	opts.UseDatanodeHostname, _ = c.GetBool("dfs.client.use.datanode.hostname")
	if v, err := c.GetBytes("strata.client.read-ahead.bytes"); err == nil {
		if v < 0 || v > 1<<30 {
			return Options{}, fmt.Errorf("hdfs: strata.client.read-ahead.bytes %d is not in [0, 1 GiB]", v)
		}
		opts.ReadAhead = int(v)
		if v == 0 {
			opts.ReadAhead = -1 // configured off
		}
	}
	if opts.SocketTimeout, err = socketTimeout(c, "dfs.client.socket-timeout"); err != nil {
		return Options{}, err
	}
	if opts.SocketWriteTimeout, err = socketTimeout(c, "dfs.datanode.socket.write.timeout"); err != nil {
		return Options{}, err
	}
	if v, err := c.GetInt("dfs.client.server-defaults.validity.period.ms"); err == nil {
		opts.ServerDefaultsValidity = time.Duration(v) * time.Millisecond
	}
	if err := saslOptionsFrom(c, &opts); err != nil {
		return Options{}, fmt.Errorf("hdfs: %w", err)
	}
	f, err := ipc.FailoverConfigFrom(c)
	if err != nil {
		return Options{}, fmt.Errorf("hdfs: %w", err)
	}
	opts.FailoverMaxAttempts, opts.RetryMaxAttempts = f.MaxFailovers, f.MaxRetries
	opts.FailoverSleepBase, opts.FailoverSleepMax = f.SleepBase, f.SleepMax
	return opts, nil
}

// readAhead is Options.ReadAhead with its default.
func (c *Client) readAhead() int {
	switch {
	case c.opts.ReadAhead == 0:
		return 4 << 20
	case c.opts.ReadAhead < 0:
		return 0 // newPrefetcher: one chunk at a time
	}
	return c.opts.ReadAhead
}

// socketTimeout reads a socket timeout key (milliseconds without a unit):
// unset is 0 (the default), a configured 0 is "no timeout" (negative).
func socketTimeout(c *conf.Configuration, key string) (time.Duration, error) {
	if c.Get(key) == "" {
		return 0, nil
	}
	d, err := c.GetDuration(key, time.Millisecond)
	switch {
	case err != nil:
		return 0, fmt.Errorf("hdfs: %w", err)
	case d < 0:
		return 0, fmt.Errorf("hdfs: %s must not be negative, got %v", key, d)
	case d == 0:
		return -1, nil
	}
	return d, nil
}

// Call makes a raw ClientProtocol call; for tools that need a method this
// package does not wrap.
func (c *Client) Call(ctx context.Context, method string, req, resp proto.Message) error {
	return wrapErr(c.nn.Call(ctx, method, req, resp))
}

func (c *Client) call(ctx context.Context, method string, req, resp proto.Message) error {
	return c.nn.Call(ctx, method, req, resp)
}

// URI implements fs.FileSystem.
func (c *Client) URI() *url.URL { u := *c.uri; return &u }

// Home implements fs.FileSystem: /user/<name>.
func (c *Client) Home() string { return "/user/" + c.opts.User }

// User implements fs.FileSystem.
func (c *Client) User() string { return c.opts.User }

// Close implements fs.FileSystem.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.renewing != nil {
		close(c.renewing)
		c.renewing = nil
	}
	c.mu.Unlock()
	return c.nn.Close()
}

func toStatus(dir string, p *hdfspb.HdfsFileStatusProto) fs.FileStatus {
	st := fs.FileStatus{
		Path:          dir,
		Length:        int64(p.GetLength()),
		IsDir:         p.GetFileType() == hdfspb.HdfsFileStatusProto_IS_DIR,
		Replication:   int(p.GetBlockReplication()),
		BlockSize:     int64(p.GetBlocksize()),
		ModTime:       time.UnixMilli(int64(p.GetModificationTime())),
		AccessTime:    time.UnixMilli(int64(p.GetAccessTime())),
		Perm:          uint16(p.GetPermission().GetPerm() & 0o7777),
		Owner:         p.GetOwner(),
		Group:         p.GetGroup(),
		StoragePolicy: uint8(p.GetStoragePolicy()),
		FileID:        p.GetFileId(),
		HasACL:        p.GetFlags()&uint32(hdfspb.HdfsFileStatusProto_HAS_ACL) != 0,
	}
	if p.GetAccessTime() == 0 {
		st.AccessTime = time.Time{}
	}
	return st
}

func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// Stat implements fs.FileSystem.
func (c *Client) Stat(ctx context.Context, p string) (fs.FileStatus, error) {
	var resp hdfspb.GetFileInfoResponseProto
	if err := c.call(ctx, "getFileInfo", &hdfspb.GetFileInfoRequestProto{Src: proto.String(p)}, &resp); err != nil {
		return fs.FileStatus{}, pathErr("stat", p, err)
	}
	if resp.Fs == nil {
		return fs.FileStatus{}, &os.PathError{Op: "stat", Path: p, Err: os.ErrNotExist}
	}
	return toStatus(p, resp.Fs), nil
}

// List implements fs.FileSystem, following getListing's pages.
func (c *Client) List(ctx context.Context, p string) ([]fs.FileStatus, error) {
	var out []fs.FileStatus
	var after []byte
	for {
		var resp hdfspb.GetListingResponseProto
		req := &hdfspb.GetListingRequestProto{Src: proto.String(p), StartAfter: after, NeedLocation: proto.Bool(false)}
		if req.StartAfter == nil {
			req.StartAfter = []byte{}
		}
		if err := c.call(ctx, "getListing", req, &resp); err != nil {
			return nil, pathErr("list", p, err)
		}
		dl := resp.DirList
		if dl == nil {
			return nil, &os.PathError{Op: "list", Path: p, Err: os.ErrNotExist}
		}
		for _, e := range dl.PartialListing {
			name := string(e.GetPath())
			if name == "" { // a file lists as itself
				out = append(out, toStatus(p, e))
				continue
			}
			out = append(out, toStatus(joinPath(p, name), e))
		}
		if dl.GetRemainingEntries() == 0 || len(dl.PartialListing) == 0 {
			return out, nil
		}
		after = dl.PartialListing[len(dl.PartialListing)-1].GetPath()
	}
}

// Mkdirs implements fs.FileSystem.
func (c *Client) Mkdirs(ctx context.Context, p string, perm uint16) error {
	if perm == 0 {
		perm = 0o777
	}
	req := &hdfspb.MkdirsRequestProto{
		Src:          proto.String(p),
		Masked:       &hdfspb.FsPermissionProto{Perm: proto.Uint32(uint32(perm &^ c.opts.Umask))},
		Unmasked:     &hdfspb.FsPermissionProto{Perm: proto.Uint32(uint32(perm))}, // for default ACLs, as Hadoop 3
		CreateParent: proto.Bool(true),
	}
	var resp hdfspb.MkdirsResponseProto
	return pathErr("mkdir", p, c.call(ctx, "mkdirs", req, &resp))
}

// Mkdir creates one directory; its parent must exist.
func (c *Client) Mkdir(ctx context.Context, p string, perm uint16) error {
	if _, err := c.Stat(ctx, p); err == nil {
		return &os.PathError{Op: "mkdir", Path: p, Err: os.ErrExist}
	}
	req := &hdfspb.MkdirsRequestProto{
		Src:          proto.String(p),
		Masked:       &hdfspb.FsPermissionProto{Perm: proto.Uint32(uint32(perm &^ c.opts.Umask))},
		Unmasked:     &hdfspb.FsPermissionProto{Perm: proto.Uint32(uint32(perm))}, // for default ACLs, as Hadoop 3
		CreateParent: proto.Bool(false),
	}
	var resp hdfspb.MkdirsResponseProto
	return pathErr("mkdir", p, c.call(ctx, "mkdirs", req, &resp))
}

// Delete implements fs.FileSystem.
func (c *Client) Delete(ctx context.Context, p string, recursive bool) error {
	var resp hdfspb.DeleteResponseProto
	if err := c.call(ctx, "delete", &hdfspb.DeleteRequestProto{Src: proto.String(p), Recursive: proto.Bool(recursive)}, &resp); err != nil {
		return pathErr("delete", p, err)
	}
	if !resp.GetResult() {
		if p == "/" {
			return &os.PathError{Op: "delete", Path: p, Err: fs.ErrInvalid}
		}
		return &os.PathError{Op: "delete", Path: p, Err: os.ErrNotExist}
	}
	return nil
}

// Rename implements fs.FileSystem with Hadoop FileSystem.rename's rules:
// a directory destination receives src inside it.
func (c *Client) Rename(ctx context.Context, src, dst string) error {
	target := dst
	if st, err := c.Stat(ctx, dst); err == nil && st.IsDir {
		target = joinPath(dst, baseName(src))
	}
	var resp hdfspb.Rename2ResponseProto
	req := &hdfspb.Rename2RequestProto{Src: proto.String(src), Dst: proto.String(target), OverwriteDest: proto.Bool(false)}
	return pathErr("rename", src, c.call(ctx, "rename2", req, &resp))
}

// Rename2 renames src to exactly dst, replacing dst if overwrite.
func (c *Client) Rename2(ctx context.Context, src, dst string, overwrite bool) error {
	var resp hdfspb.Rename2ResponseProto
	req := &hdfspb.Rename2RequestProto{Src: proto.String(src), Dst: proto.String(dst), OverwriteDest: proto.Bool(overwrite)}
	return pathErr("rename", src, c.call(ctx, "rename2", req, &resp))
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// SetPermission implements fs.FileSystem.
func (c *Client) SetPermission(ctx context.Context, p string, perm uint16) error {
	req := &hdfspb.SetPermissionRequestProto{Src: proto.String(p), Permission: &hdfspb.FsPermissionProto{Perm: proto.Uint32(uint32(perm & 0o7777))}}
	return pathErr("chmod", p, c.call(ctx, "setPermission", req, &hdfspb.SetPermissionResponseProto{}))
}

// SetOwner implements fs.FileSystem.
func (c *Client) SetOwner(ctx context.Context, p, owner, group string) error {
	req := &hdfspb.SetOwnerRequestProto{Src: proto.String(p)}
	if owner != "" {
		req.Username = proto.String(owner)
	}
	if group != "" {
		req.Groupname = proto.String(group)
	}
	return pathErr("chown", p, c.call(ctx, "setOwner", req, &hdfspb.SetOwnerResponseProto{}))
}

// SetTimes implements fs.FileSystem.
func (c *Client) SetTimes(ctx context.Context, p string, mtime, atime time.Time) error {
	ms := func(t time.Time) uint64 {
		if t.IsZero() {
			return ^uint64(0) // -1: unchanged
		}
		return uint64(t.UnixMilli())
	}
	req := &hdfspb.SetTimesRequestProto{Src: proto.String(p), Mtime: proto.Uint64(ms(mtime)), Atime: proto.Uint64(ms(atime))}
	return pathErr("settimes", p, c.call(ctx, "setTimes", req, &hdfspb.SetTimesResponseProto{}))
}

// SetReplication sets a file's target replication.
func (c *Client) SetReplication(ctx context.Context, p string, n int) error {
	var resp hdfspb.SetReplicationResponseProto
	req := &hdfspb.SetReplicationRequestProto{Src: proto.String(p), Replication: proto.Uint32(uint32(n))}
	if err := c.call(ctx, "setReplication", req, &resp); err != nil {
		return pathErr("setrep", p, err)
	}
	if !resp.GetResult() {
		return &os.PathError{Op: "setrep", Path: p, Err: fs.ErrIsDir}
	}
	return nil
}

// ContentSummary implements fs.FileSystem.
func (c *Client) ContentSummary(ctx context.Context, p string) (fs.ContentSummary, error) {
	var resp hdfspb.GetContentSummaryResponseProto
	if err := c.call(ctx, "getContentSummary", &hdfspb.GetContentSummaryRequestProto{Path: proto.String(p)}, &resp); err != nil {
		return fs.ContentSummary{}, pathErr("count", p, err)
	}
	s := resp.GetSummary()
	return fs.ContentSummary{
		Length: int64(s.GetLength()), FileCount: int64(s.GetFileCount()), DirectoryCount: int64(s.GetDirectoryCount()),
		Quota: int64(s.GetQuota()), SpaceConsumed: int64(s.GetSpaceConsumed()), SpaceQuota: int64(s.GetSpaceQuota()),
	}, nil
}

// Status implements fs.FileSystem.
func (c *Client) Status(ctx context.Context) (fs.FsStatus, error) {
	var resp hdfspb.GetFsStatsResponseProto
	if err := c.call(ctx, "getFsStats", &hdfspb.GetFsStatusRequestProto{}, &resp); err != nil {
		return fs.FsStatus{}, wrapErr(err)
	}
	return fs.FsStatus{Capacity: int64(resp.GetCapacity()), Used: int64(resp.GetUsed()), Remaining: int64(resp.GetRemaining())}, nil
}

// StoragePolicy is a block storage policy as the NameNode reports it.
type StoragePolicy struct {
	ID                   uint8
	Name                 string
	StorageTypes         []string
	CreationFallbacks    []string
	ReplicationFallbacks []string
}

func policyFrom(p *hdfspb.BlockStoragePolicyProto) StoragePolicy {
	names := func(t *hdfspb.StorageTypesProto) []string {
		out := []string{}
		for _, x := range t.GetStorageTypes() {
			out = append(out, x.String())
		}
		return out
	}
	return StoragePolicy{
		ID: uint8(p.GetPolicyId()), Name: p.GetName(), StorageTypes: names(p.GetCreationPolicy()),
		CreationFallbacks: names(p.GetCreationFallbackPolicy()), ReplicationFallbacks: names(p.GetReplicationFallbackPolicy()),
	}
}

// StoragePolicies lists the NameNode's storage policies.
func (c *Client) StoragePolicies(ctx context.Context) ([]StoragePolicy, error) {
	var resp hdfspb.GetStoragePoliciesResponseProto
	if err := c.call(ctx, "getStoragePolicies", &hdfspb.GetStoragePoliciesRequestProto{}, &resp); err != nil {
		return nil, wrapErr(err)
	}
	var out []StoragePolicy
	for _, p := range resp.Policies {
		out = append(out, policyFrom(p))
	}
	return out, nil
}

// SetStoragePolicy sets p's policy by name; "" unsets it.
func (c *Client) SetStoragePolicy(ctx context.Context, p, policy string) error {
	if policy == "" {
		return pathErr("unsetStoragePolicy", p, c.call(ctx, "unsetStoragePolicy", &hdfspb.UnsetStoragePolicyRequestProto{Src: proto.String(p)}, &hdfspb.UnsetStoragePolicyResponseProto{}))
	}
	req := &hdfspb.SetStoragePolicyRequestProto{Src: proto.String(p), PolicyName: proto.String(policy)}
	return pathErr("setStoragePolicy", p, c.call(ctx, "setStoragePolicy", req, &hdfspb.SetStoragePolicyResponseProto{}))
}

// GetStoragePolicy returns p's effective policy.
func (c *Client) GetStoragePolicy(ctx context.Context, p string) (StoragePolicy, error) {
	var resp hdfspb.GetStoragePolicyResponseProto
	if err := c.call(ctx, "getStoragePolicy", &hdfspb.GetStoragePolicyRequestProto{Path: proto.String(p)}, &resp); err != nil {
		return StoragePolicy{}, pathErr("getStoragePolicy", p, err)
	}
	return policyFrom(resp.GetStoragePolicy()), nil
}

// SafeMode performs a safe mode action ("get", "enter", "leave") and
// reports whether safe mode is on.
func (c *Client) SafeMode(ctx context.Context, action string) (bool, error) {
	a := map[string]hdfspb.SafeModeActionProto{
		"get": hdfspb.SafeModeActionProto_SAFEMODE_GET, "enter": hdfspb.SafeModeActionProto_SAFEMODE_ENTER,
		"leave": hdfspb.SafeModeActionProto_SAFEMODE_LEAVE, "forceExit": hdfspb.SafeModeActionProto_SAFEMODE_FORCE_EXIT,
	}[action]
	if a == 0 {
		return false, fmt.Errorf("hdfs: unknown safe mode action %q", action)
	}
	var resp hdfspb.SetSafeModeResponseProto
	if err := c.call(ctx, "setSafeMode", &hdfspb.SetSafeModeRequestProto{Action: a.Enum()}, &resp); err != nil {
		return false, wrapErr(err)
	}
	return resp.GetResult(), nil
}

// startRenewing keeps the client's leases alive while it has files open,
// renewing well within the NameNode's soft limit (60 s). Renewals go
// through the same failover as every NameNode call, so a new active
// NameNode sees them.
func (c *Client) startRenewing() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writers++
	if c.renewing != nil {
		return
	}
	stop := make(chan struct{})
	c.renewing = stop
	go func() {
		t := time.NewTicker(c.renew)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				c.call(ctx, "renewLease", &hdfspb.RenewLeaseRequestProto{ClientName: proto.String(c.name)}, &hdfspb.RenewLeaseResponseProto{})
				cancel()
			}
		}
	}()
}

func (c *Client) stopRenewing() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writers--
	if c.writers == 0 && c.renewing != nil {
		close(c.renewing)
		c.renewing = nil
	}
}

var _ fs.FileSystem = (*Client)(nil)

// SatisfyStoragePolicy asks the NameNode to move the replicas of every
// file under p to the storage types of its policy (what `strata mover`
// does for each path).
func (c *Client) SatisfyStoragePolicy(ctx context.Context, p string) error {
	req := &hdfspb.SatisfyStoragePolicyRequestProto{Src: proto.String(p)}
	return pathErr("satisfyStoragePolicy", p, c.call(ctx, "satisfyStoragePolicy", req, &hdfspb.SatisfyStoragePolicyResponseProto{}))
}
