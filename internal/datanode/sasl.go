package datanode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/digestmd5"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// Data transfer protection, the DataNode's side (Hadoop's
// SaslDataTransferServer; docs/format/datatransfer-sasl.md). With
// dfs.data.transfer.protection or dfs.encrypt.data.transfer set, every
// TCP connection to the transfer port must start with the SASL handshake
// (datatransfer.SASLServer) before its first op; the Unix domain socket
// of short-circuit reads is a local channel and needs none, as Hadoop's
// DomainPeer. The credentials are block tokens (the password recomputed
// from the identifier with the block keys of any of the NameNodes) or,
// with encryption, data encryption keys. The whole handshake runs under
// one deadline of dfs.client.socket-timeout, before the connection holds
// a transfer slot, so a silent or slow peer costs only its own goroutine.
// A client that skips the handshake is answered ERROR with Hadoop's
// InvalidMagicNumberException message (Hadoop's DataNode only closes the
// connection; the answer tells the user why) and dropped.
//
// The DataNode's own connections to other DataNodes (pipeline mirrors,
// replication and balancer copies) do the client's side with the same
// settings (Hadoop's SaslDataTransferClient in the DataNode), minting
// data encryption keys from its block keys when encryption is on.

// Keys of data transfer protection.
const (
	keyDataTransferProtection = "dfs.data.transfer.protection"
	keyEncryptDataTransfer    = "dfs.encrypt.data.transfer"
	keyEncryptAlgorithm       = "dfs.encrypt.data.transfer.algorithm"
	keyEncryptCipherSuites    = "dfs.encrypt.data.transfer.cipher.suites"
	keyEncryptKeyBits         = "dfs.encrypt.data.transfer.cipher.key.bitlength"
)

// SASLConfig is a DataNode's data transfer protection.
type SASLConfig struct {
	// QOPs are dfs.data.transfer.protection's (authentication →
	// auth, integrity → auth-int, privacy → auth-conf), offered in
	// order; none means no handshake unless Encrypt.
	QOPs []string
	// Encrypt is dfs.encrypt.data.transfer (default false): handshakes
	// use data encryption keys and privacy.
	Encrypt bool
	// Algorithm is dfs.encrypt.data.transfer.algorithm: the DIGEST-MD5
	// cipher (rc4; Hadoop's 3des and des are not implemented). Empty
	// offers rc4 (128-bit) only: the offer is not authenticated, so
	// offering the 40- and 56-bit variants would let an on-path attacker
	// downgrade to them.
	Algorithm string
	// CipherSuites is dfs.encrypt.data.transfer.cipher.suites: empty, or
	// AES/CTR/NoPadding to switch privacy connections to AES/CTR.
	CipherSuites string
	// KeyBits is dfs.encrypt.data.transfer.cipher.key.bitlength (128,
	// 192 or 256; default 128).
	KeyBits int
}

// Enabled reports whether connections must start with the handshake.
func (s SASLConfig) Enabled() bool { return len(s.QOPs) > 0 || s.Encrypt }

func saslConfigFrom(c *conf.Configuration, r *conf.Reader) SASLConfig {
	var s SASLConfig
	var err error
	s.QOPs, err = datatransfer.ParseProtection(c.Get(keyDataTransferProtection))
	r.AddAs(err)
	s.Encrypt = r.Bool(keyEncryptDataTransfer)
	s.Algorithm = strings.TrimSpace(c.Get(keyEncryptAlgorithm))
	s.CipherSuites = strings.TrimSpace(c.Get(keyEncryptCipherSuites))
	s.KeyBits = int(r.Int(keyEncryptKeyBits))
	return s
}

func (s SASLConfig) validate(blockTokens bool) error {
	switch {
	case s.Enabled() && !blockTokens:
		return fmt.Errorf("datanode: %s and %s need %s=true: block tokens are the credentials", keyDataTransferProtection, keyEncryptDataTransfer, keyBlockTokens)
	case s.Algorithm != "" && s.Algorithm != "rc4":
		return fmt.Errorf("datanode: %s=%s is not supported (rc4, or unset)", keyEncryptAlgorithm, s.Algorithm)
	case s.CipherSuites != "" && s.CipherSuites != datatransfer.AESCTRNoPadding:
		return fmt.Errorf("datanode: Invalid cipher suite, %s=%s", keyEncryptCipherSuites, s.CipherSuites)
	case s.KeyBits != 0 && s.KeyBits != 128 && s.KeyBits != 192 && s.KeyBits != 256:
		return fmt.Errorf("datanode: %s=%d: 128, 192 or 256", keyEncryptKeyBits, s.KeyBits)
	}
	return nil
}

func (s SASLConfig) ciphers() []string {
	if s.Algorithm != "" {
		return []string{s.Algorithm}
	}
	return nil
}

// saslServer is the handshake's server side for this DataNode.
func (d *DataNode) saslServer() *datatransfer.SASLServer {
	s := d.cfg.SASL
	return &datatransfer.SASLServer{QOPs: s.QOPs, Encrypt: s.Encrypt, Ciphers: s.ciphers(), CipherSuites: s.CipherSuites,
		KeyBits: s.KeyBits, TokenPassword: d.tokenPassword, EncryptionKey: d.encryptionKey}
}

// tokenPassword recomputes a block token's password with any NameNode's
// keys; the refusal is the preferred NameNode's.
func (d *DataNode) tokenPassword(id []byte) ([]byte, error) {
	pt := d.tokens.Load()
	if pt == nil {
		return nil, &blocktoken.InvalidTokenError{Msg: "Block token cannot be verified yet: the DataNode has no block keys from its NameNode"}
	}
	var first error
	for _, m := range pt.ordered(d.preferred()) {
		p, err := m.Password(id)
		if err == nil {
			return p, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

func (d *DataNode) encryptionKey(keyID int32, pool string, nonce []byte) ([]byte, error) {
	pt := d.tokens.Load()
	if pt == nil {
		return nil, fmt.Errorf("%w: the DataNode has no block keys yet", datatransfer.ErrUnknownKey)
	}
	var first error
	for _, m := range pt.ordered(d.preferred()) {
		k, err := m.EncryptionKey(keyID, pool, nonce)
		if err == nil {
			return k, nil
		}
		if first == nil {
			first = err
		}
	}
	var uk *blocktoken.UnknownKeyError
	if errors.As(first, &uk) {
		return nil, fmt.Errorf("%w: %s", datatransfer.ErrUnknownKey, uk.Msg)
	}
	return nil, first
}

// acceptSASL runs the server's handshake on a new TCP connection raw,
// under one deadline, and returns the connection its ops run on; nil
// (with the reason logged) drops the connection.
func (d *DataNode) acceptSASL(raw net.Conn) net.Conn {
	raw.SetDeadline(time.Now().Add(d.cfg.SocketTimeout))
	c, user, err := d.saslServer().Handshake(raw)
	if err != nil {
		d.stats.SASLRefusals.Add(1)
		var me *datatransfer.MagicError
		if errors.As(err, &me) {
			d.log.Info("datanode: Failed to read expected SASL data transfer protection handshake from client; perhaps it does not support SASL data transfer protection", "remote", remoteOf(raw), "err", err)
			d.refuseUnprotected(raw, me)
			return nil
		}
		d.log.Warn("datanode: SASL handshake failed", "remote", remoteOf(raw), "err", err)
		return nil
	}
	raw.SetDeadline(time.Time{})
	d.log.Debug("datanode: SASL handshake done", "remote", remoteOf(raw), "user", user)
	return c
}

// refuseUnprotected answers a client that sent an op without the
// handshake, then lets its op's remaining bytes arrive so that the close
// does not reset the connection under the answer.
func (d *DataNode) refuseUnprotected(raw net.Conn, me *datatransfer.MagicError) {
	msg := me.Error() + " The DataNode requires SASL data transfer protection (" + keyDataTransferProtection + "=" + d.protectionString() + ")."
	datatransfer.WriteResponse(raw, &hdfspb.BlockOpResponseProto{Status: hdfspb.Status_ERROR.Enum(), Message: proto.String(msg)})
	raw.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	io.Copy(io.Discard, io.LimitReader(raw, 64<<10))
}

// protectionNames is QOPs as dfs.data.transfer.protection names them.
func (s SASLConfig) protectionNames() []string {
	names := map[string]string{digestmd5.Auth: "authentication", digestmd5.AuthInt: "integrity", digestmd5.AuthConf: "privacy"}
	var out []string
	for _, q := range s.QOPs {
		out = append(out, names[q])
	}
	return out
}

func (d *DataNode) protectionString() string {
	out := d.cfg.SASL.protectionNames()
	if d.cfg.SASL.Encrypt {
		out = append(out, keyEncryptDataTransfer+"=true")
	}
	return strings.Join(out, ",")
}

// dialer is how the DataNode connects to other DataNodes' transfer
// ports: with the client's side of the handshake when protection is on.
func (d *DataNode) dialer() *datatransfer.Dialer {
	s := d.cfg.SASL
	if !s.Enabled() {
		return &datatransfer.Dialer{}
	}
	cl := &datatransfer.SASLClient{QOPs: s.QOPs, CipherSuites: s.CipherSuites, Timeout: d.cfg.SocketTimeout}
	if s.Encrypt {
		cl.EncryptionKey = d.dataEncryptionKey
	}
	return &datatransfer.Dialer{SASL: cl}
}

// dataEncryptionKey mints a key for the DataNode's own connection, as
// Hadoop's DataNode does with its block keys.
func (d *DataNode) dataEncryptionKey(context.Context) (*hdfspb.DataEncryptionKeyProto, error) {
	pt := d.tokens.Load()
	if pt == nil {
		return nil, errors.New("datanode: no block keys to make a data encryption key with")
	}
	k, err := pt.signer(d.preferred()).MintEncryptionKey(d.cfg.SASL.Algorithm)
	if err != nil {
		return nil, err
	}
	return blocktoken.EncryptionKeyProto(k), nil
}

// protection is dfs.data.transfer.protection's value, for the DataNode's
// own hdfs client (WebHDFS).
func (s SASLConfig) protection() string { return strings.Join(s.protectionNames(), ",") }
