package hdfs

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// Data transfer protection, the client's side (Hadoop's
// SaslDataTransferClient): with Options.DataTransferProtection or
// EncryptDataTransfer set, every connection to a DataNode's transfer port
// starts with the SASL handshake, authenticated by the op's block token,
// or, when the cluster encrypts data transfer (this client's
// dfs.encrypt.data.transfer, or the NameNode's server defaults), by a
// data encryption key from the NameNode's getDataEncryptionKey, cached
// until shortly before it expires. A token refused at the handshake
// counts as a refused token (datatransfer.ErrAccessToken): the callers
// refetch locations as they do for a token refused by an op.

func saslOptionsFrom(c *conf.Configuration, opts *Options) error {
	opts.DataTransferProtection = c.Get("dfs.data.transfer.protection")
	if _, err := datatransfer.ParseProtection(opts.DataTransferProtection); err != nil {
		return err
	}
	opts.EncryptDataTransfer, _ = c.GetBool("dfs.encrypt.data.transfer")
	opts.DataTransferCipherSuites = c.Get("dfs.encrypt.data.transfer.cipher.suites")
	return nil
}

// newDialer is the Client's one way of connecting to DataNodes.
func (c *Client) newDialer() (*datatransfer.Dialer, error) {
	qops, err := datatransfer.ParseProtection(c.opts.DataTransferProtection)
	if err != nil {
		return nil, err
	}
	if len(qops) == 0 && !c.opts.EncryptDataTransfer {
		return &datatransfer.Dialer{}, nil
	}
	timeout := c.opts.SocketTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	return &datatransfer.Dialer{SASL: &datatransfer.SASLClient{QOPs: qops, CipherSuites: c.opts.DataTransferCipherSuites,
		EncryptionKey: c.dataEncryptionKey, Timeout: timeout}}, nil
}

// dial connects to DataNode d for an op carrying token.
func (c *Client) dial(ctx context.Context, d *hdfspb.DatanodeInfoProto, token *hdfspb.TokenProto) (net.Conn, error) {
	dialer, err := c.currentDialer(ctx)
	if err != nil {
		return nil, err
	}
	conn, err := dialer.Dial(ctx, c.dialAddr(d), token)
	if errors.Is(err, datatransfer.ErrUnknownKey) {
		// The DataNode does not know the key's block key (rolled, or
		// the key is older than the DataNode's keys): a new key, once.
		c.mu.Lock()
		c.encKey = nil
		c.mu.Unlock()
		conn, err = dialer.Dial(ctx, c.dialAddr(d), token)
	}
	return conn, err
}

// currentDialer is the configured dialer; without configured protection,
// the NameNode's server defaults (cached, serverDefaults) say whether it
// encrypts data transfer, as Hadoop's client asks them (then keys and
// privacy are used). When they cannot be had the dial fails, as Hadoop's
// DFSClient's does: dialing without the handshake would send the op and
// its block token in cleartext to a cluster that may want encryption.
func (c *Client) currentDialer(ctx context.Context) (*datatransfer.Dialer, error) {
	c.mu.Lock()
	d := c.dialer
	c.mu.Unlock()
	if d.SASL.Enabled() {
		return d, nil
	}
	defs, err := c.serverDefaults(ctx)
	if err != nil {
		return nil, err
	}
	if !defs.GetEncryptDataTransfer() {
		return d, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.encDialer == nil {
		timeout := c.opts.SocketTimeout
		if timeout <= 0 {
			timeout = 60 * time.Second
		}
		c.encDialer = &datatransfer.Dialer{SASL: &datatransfer.SASLClient{CipherSuites: c.opts.DataTransferCipherSuites,
			EncryptionKey: c.dataEncryptionKey, Timeout: timeout}}
	}
	return c.encDialer, nil
}

// dataEncryptionKey returns the NameNode's data encryption key when the
// cluster encrypts data transfer, else nil (the block token is used).
func (c *Client) dataEncryptionKey(ctx context.Context) (*hdfspb.DataEncryptionKeyProto, error) {
	if !c.opts.EncryptDataTransfer {
		d, err := c.serverDefaults(ctx)
		if err != nil {
			return nil, err
		}
		if !d.GetEncryptDataTransfer() {
			return nil, nil
		}
	}
	c.mu.Lock()
	k := c.encKey
	c.mu.Unlock()
	// Renewed a minute before it expires, as Hadoop's client does.
	if k != nil && time.Now().Add(time.Minute).Before(time.UnixMilli(int64(k.GetExpiryDate()))) {
		return k, nil
	}
	var resp hdfspb.GetDataEncryptionKeyResponseProto
	if err := c.call(ctx, "getDataEncryptionKey", &hdfspb.GetDataEncryptionKeyRequestProto{}, &resp); err != nil {
		return nil, wrapErr(err)
	}
	k = resp.GetDataEncryptionKey()
	c.mu.Lock()
	c.encKey = k
	c.mu.Unlock()
	return k, nil
}
