package datatransfer

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/digestmd5"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// SASL data transfer protection (Hadoop 2.6+'s SaslDataTransferClient and
// SaslDataTransferServer; docs/format/datatransfer-sasl.md). When
// dfs.data.transfer.protection or dfs.encrypt.data.transfer is set, every
// TCP connection to a DataNode's transfer port starts with the magic
// number 0xDEADBEEF and a DIGEST-MD5 exchange of
// DataTransferEncryptorMessageProto, varint-delimited:
//
//	client: magic, {SUCCESS, payload ""}
//	server: {SUCCESS, payload digest-challenge}
//	client: {SUCCESS, payload digest-response, cipherOption [AES_CTR_NOPADDING]?}
//	server: {SUCCESS, payload rspauth, cipherOption [wrapped keys]?}
//
// The credentials are the op's block token (username the base64
// identifier, password the base64 token password) or, with
// dfs.encrypt.data.transfer, the NameNode's data encryption key (username
// "keyId blockPoolId base64(nonce)", password base64(key)). After it, the
// ops run on the negotiated layer: plain for auth, DIGEST-MD5 wrapped
// messages for auth-int and auth-conf, or AES/CTR streams when both sides
// chose that cipher suite.

// SASLMagic starts a SASL handshake (SASL_TRANSFER_MAGIC_NUMBER).
const SASLMagic = 0xDEADBEEF

// Protocol and server name of the DIGEST-MD5 digest-uri, as Hadoop's.
const (
	saslProtocol   = "hdfs"
	saslServerName = "0"
	// maxSASLMessage bounds one handshake message: a digest-response is at
	// most 4096 bytes, cipher options a few hundred.
	maxSASLMessage = 16 << 10
	// saslMaxBuf is the maxbuf both sides advertise: the largest RFC 2831
	// allows, since peers (colinmarc/hdfs, Hadoop's SaslOutputStream) wrap
	// a whole packet, larger than the default 64 KiB, in one message.
	saslMaxBuf = digestmd5.MaxMaxBuf
	// AESCTRNoPadding is the one cipher suite of
	// dfs.encrypt.data.transfer.cipher.suites.
	AESCTRNoPadding = "AES/CTR/NoPadding"
)

// ParseProtection turns dfs.data.transfer.protection (a comma-separated
// list of authentication, integrity, privacy) into DIGEST-MD5 qops, in the
// list's order; "" is none.
func ParseProtection(s string) ([]string, error) {
	var qops []string
	for _, p := range strings.Split(s, ",") {
		switch strings.ToLower(strings.TrimSpace(p)) {
		case "":
		case "authentication":
			qops = append(qops, digestmd5.Auth)
		case "integrity":
			qops = append(qops, digestmd5.AuthInt)
		case "privacy":
			qops = append(qops, digestmd5.AuthConf)
		default:
			return nil, fmt.Errorf("datatransfer: dfs.data.transfer.protection: unknown value %q (authentication, integrity or privacy)", p)
		}
	}
	return qops, nil
}

// SASLError is a handshake the peer refused (status ERROR or
// ERROR_UNKNOWN_KEY) or that failed here.
type SASLError struct {
	Status      hdfspb.DataTransferEncryptorMessageProto_DataTransferEncryptorStatus
	Message     string
	AccessToken bool // the block token was refused: fetch a new one
}

func (e *SASLError) Error() string {
	return "datatransfer: SASL handshake refused: " + e.Message
}

// ErrUnknownKey is matched by a SASLError with ERROR_UNKNOWN_KEY: the data
// encryption key's block key is unknown to the DataNode; fetch a new key.
var ErrUnknownKey = errors.New("datatransfer: data encryption key unknown to the DataNode")

// Is makes errors.Is(err, ErrAccessToken) hold for a refused token, so the
// callers' token refresh covers handshakes, and ErrUnknownKey for
// ERROR_UNKNOWN_KEY.
func (e *SASLError) Is(target error) bool {
	return target == ErrAccessToken && e.AccessToken ||
		target == ErrUnknownKey && e.Status == hdfspb.DataTransferEncryptorMessageProto_ERROR_UNKNOWN_KEY
}

// readSASLMessage reads one delimited message without reading past it
// (the handshake runs on the bare connection; nothing may be buffered).
func readSASLMessage(r io.Reader) (*hdfspb.DataTransferEncryptorMessageProto, error) {
	n, err := binary.ReadUvarint(byteReader{r})
	if err != nil {
		return nil, noEOF(err)
	}
	if n > maxSASLMessage {
		return nil, fmt.Errorf("%w: SASL message of %d bytes (limit %d)", ErrMessageTooLarge, n, maxSASLMessage)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, noEOF(err)
	}
	m := &hdfspb.DataTransferEncryptorMessageProto{}
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("datatransfer: decode SASL message: %w", err)
	}
	return m, nil
}

// readSASLReply reads a message and turns a non-SUCCESS status into a
// *SASLError.
func readSASLReply(r io.Reader) (*hdfspb.DataTransferEncryptorMessageProto, error) {
	m, err := readSASLMessage(r)
	if err != nil {
		return nil, err
	}
	if m.GetStatus() != hdfspb.DataTransferEncryptorMessageProto_SUCCESS {
		return nil, &SASLError{Status: m.GetStatus(), Message: m.GetMessage(), AccessToken: m.GetAccessTokenError()}
	}
	return m, nil
}

type byteReader struct{ r io.Reader }

func (b byteReader) ReadByte() (byte, error) {
	var c [1]byte
	_, err := io.ReadFull(b.r, c[:])
	return c[0], err
}

func success(payload []byte) *hdfspb.DataTransferEncryptorMessageProto {
	return &hdfspb.DataTransferEncryptorMessageProto{Status: hdfspb.DataTransferEncryptorMessageProto_SUCCESS.Enum(), Payload: payload}
}

// SASLClient is the client side's configuration. The zero value (no
// qops, no encryption key) does no handshake.
type SASLClient struct {
	// QOPs are dfs.data.transfer.protection's, most wanted first.
	QOPs []string
	// EncryptionKey, when set (dfs.encrypt.data.transfer), returns the
	// NameNode's data encryption key; a nil key falls back to the block
	// token, as Hadoop's client does when the NameNode has none.
	EncryptionKey func(ctx context.Context) (*hdfspb.DataEncryptionKeyProto, error)
	// CipherSuites is dfs.encrypt.data.transfer.cipher.suites: with
	// AES/CTR/NoPadding, a privacy handshake asks for AES streams.
	CipherSuites string
	// Timeout bounds the whole handshake (default 60 s).
	Timeout time.Duration
}

// Enabled reports whether connections do the handshake.
func (s *SASLClient) Enabled() bool { return s != nil && (len(s.QOPs) > 0 || s.EncryptionKey != nil) }

// Handshake runs the client's side on conn for an op carrying token and
// returns the connection the op must use. On error conn is left open.
func (s *SASLClient) Handshake(ctx context.Context, conn net.Conn, token *hdfspb.TokenProto) (net.Conn, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(pastDeadline) })
	defer stop()
	c, err := s.handshake(ctx, conn, token)
	if err != nil {
		return nil, ctxError(ctx, err)
	}
	conn.SetDeadline(time.Time{})
	return c, nil
}

func (s *SASLClient) handshake(ctx context.Context, conn net.Conn, token *hdfspb.TokenProto) (net.Conn, error) {
	qops := s.QOPs
	var user, pass string
	var key *hdfspb.DataEncryptionKeyProto
	if s.EncryptionKey != nil {
		var err error
		if key, err = s.EncryptionKey(ctx); err != nil {
			return nil, err
		}
	}
	if key != nil && len(key.GetNonce()) > 0 {
		user = fmt.Sprintf("%d %s %s", int32(key.GetKeyId()), key.GetBlockPoolId(), base64.StdEncoding.EncodeToString(key.GetNonce()))
		pass = base64.StdEncoding.EncodeToString(key.GetEncryptionKey())
		qops = []string{digestmd5.AuthConf}
	} else {
		if token == nil {
			token = emptyToken()
		}
		user = base64.StdEncoding.EncodeToString(token.GetIdentifier())
		pass = base64.StdEncoding.EncodeToString(token.GetPassword())
		if len(qops) == 0 {
			qops = []string{digestmd5.AuthConf}
		}
	}
	cl, err := digestmd5.NewClient(digestmd5.ClientConfig{Protocol: saslProtocol, ServerName: saslServerName,
		Username: user, Password: pass, QOPs: qops, MaxBuf: saslMaxBuf})
	if err != nil {
		return nil, err
	}
	first, err := appendDelimited(binary.BigEndian.AppendUint32(nil, SASLMagic), success([]byte{}))
	if err != nil {
		return nil, err
	}
	if _, err := conn.Write(first); err != nil {
		return nil, err
	}
	m, err := readSASLReply(conn)
	if err != nil {
		return nil, err
	}
	resp, err := cl.Respond(m.GetPayload())
	if err != nil {
		return nil, err
	}
	out := success(resp)
	aes := cl.QOP() == digestmd5.AuthConf && s.CipherSuites != ""
	if aes {
		if s.CipherSuites != AESCTRNoPadding {
			return nil, fmt.Errorf("datatransfer: Invalid cipher suite, dfs.encrypt.data.transfer.cipher.suites=%s", s.CipherSuites)
		}
		out.CipherOption = []*hdfspb.CipherOptionProto{{Suite: hdfspb.CipherSuiteProto_AES_CTR_NOPADDING.Enum()}}
	}
	if err := WriteDelimited(conn, out); err != nil {
		return nil, err
	}
	m, err = readSASLReply(conn)
	if err != nil {
		return nil, err
	}
	if err := cl.Verify(m.GetPayload()); err != nil {
		return nil, err
	}
	sec := cl.Security()
	if sec == nil {
		return conn, nil
	}
	if opts := m.GetCipherOption(); len(opts) > 0 {
		if !aes || len(opts) != 1 || opts[0].GetSuite() != hdfspb.CipherSuiteProto_AES_CTR_NOPADDING {
			return nil, errors.New("datatransfer: the DataNode chose a cipher option that was not offered")
		}
		o := opts[0]
		inKey, err := sec.Unwrap(o.GetInKey())
		if err != nil {
			return nil, fmt.Errorf("datatransfer: unwrapping the cipher key: %w", err)
		}
		inKey = append([]byte(nil), inKey...)
		outKey, err := sec.Unwrap(o.GetOutKey())
		if err != nil {
			return nil, fmt.Errorf("datatransfer: unwrapping the cipher key: %w", err)
		}
		// The client encrypts with the "in" key (the DataNode's input).
		return newAESConn(conn, inKey, o.GetInIv(), outKey, o.GetOutIv())
	}
	return wrapConn(conn, sec), nil
}

// wrapConn puts sec's layer on conn. Each Write (a whole packet, as the
// DataNode's SendBlock and the writers issue them) is one wrapped message,
// whatever the peer's maxbuf, as Hadoop's SaslOutputStream does:
// colinmarc/hdfs's reader loses bytes when a read spans two messages.
func wrapConn(conn net.Conn, sec *digestmd5.Security) net.Conn {
	sec.SetSendLimit(saslMaxBuf)
	return digestmd5.NewConn(conn, sec)
}

// SASLServer is the DataNode's side's configuration.
type SASLServer struct {
	// QOPs are dfs.data.transfer.protection's, offered in this order.
	QOPs []string
	// Encrypt is dfs.encrypt.data.transfer: only data encryption keys are
	// accepted, and the qop is auth-conf.
	Encrypt bool
	// Ciphers are the DIGEST-MD5 ciphers offered for auth-conf
	// (dfs.encrypt.data.transfer.algorithm; default
	// digestmd5.DefaultCiphers, rc4 only).
	Ciphers []string
	// CipherSuites is dfs.encrypt.data.transfer.cipher.suites.
	CipherSuites string
	// KeyBits is dfs.encrypt.data.transfer.cipher.key.bitlength (128,
	// 192 or 256; default 128).
	KeyBits int
	// TokenPassword returns the password of a block token identifier, or
	// the *blocktoken.InvalidTokenError refusing it.
	TokenPassword func(identifier []byte) ([]byte, error)
	// EncryptionKey returns a data encryption key, or refuses it (an
	// error wrapping ErrUnknownKey answers ERROR_UNKNOWN_KEY).
	EncryptionKey func(keyID int32, pool string, nonce []byte) ([]byte, error)
	// Rand makes nonces and AES keys (default crypto/rand).
	Rand io.Reader
}

// Enabled reports whether connections must start with the handshake.
func (s *SASLServer) Enabled() bool { return s != nil && (len(s.QOPs) > 0 || s.Encrypt) }

// MagicError is a connection that did not start with SASLMagic (Hadoop's
// InvalidMagicNumberException): a client without data transfer
// protection.
type MagicError struct{ Got uint32 }

func (e *MagicError) Error() string {
	return fmt.Sprintf("Received %x instead of %x from client.", e.Got, uint32(SASLMagic))
}

// tokenRefusal marks a credential error as a refused block token.
type tokenRefusal struct{ err error }

func (e tokenRefusal) Error() string { return e.err.Error() }
func (e tokenRefusal) Unwrap() error { return e.err }

// Handshake runs the DataNode's side on conn, whose deadline the caller
// has set, and returns the connection the ops run on and the
// authenticated username. A failure after the magic number is answered
// with status ERROR (accessTokenError for a refused token) or
// ERROR_UNKNOWN_KEY, as Hadoop's; a wrong magic number is a *MagicError,
// unanswered.
func (s *SASLServer) Handshake(conn net.Conn) (net.Conn, string, error) {
	var mb [4]byte
	if _, err := io.ReadFull(conn, mb[:]); err != nil {
		return nil, "", err
	}
	if got := binary.BigEndian.Uint32(mb[:]); got != SASLMagic {
		return nil, "", &MagicError{Got: got}
	}
	c, user, err := s.handshake(conn)
	if err != nil {
		reply := &hdfspb.DataTransferEncryptorMessageProto{Status: hdfspb.DataTransferEncryptorMessageProto_ERROR.Enum(), Message: proto.String(err.Error())}
		var ce *digestmd5.CredentialError
		var tr tokenRefusal
		switch {
		case errors.Is(err, ErrUnknownKey):
			reply.Status = hdfspb.DataTransferEncryptorMessageProto_ERROR_UNKNOWN_KEY.Enum()
			if errors.As(err, &ce) {
				reply.Message = proto.String(ce.Err.Error())
			}
		case errors.As(err, &tr):
			reply.Message = proto.String(tr.err.Error())
			reply.AccessTokenError = proto.Bool(true)
		}
		WriteDelimited(conn, reply)
		return nil, "", err
	}
	return c, user, nil
}

func (s *SASLServer) handshake(conn net.Conn) (net.Conn, string, error) {
	m, err := readSASLReply(conn)
	if err != nil {
		return nil, "", err
	}
	if len(m.GetPayload()) != 0 {
		return nil, "", errors.New("DIGEST-MD5 must not have an initial response")
	}
	cfg := digestmd5.ServerConfig{Protocol: saslProtocol, ServerName: saslServerName, QOPs: s.QOPs,
		Ciphers: s.Ciphers, MaxBuf: saslMaxBuf, Rand: s.Rand, Credentials: s.tokenCredentials}
	if s.Encrypt {
		cfg.QOPs, cfg.Credentials = []string{digestmd5.AuthConf}, s.keyCredentials
	}
	srv, err := digestmd5.NewServer(cfg)
	if err != nil {
		return nil, "", err
	}
	ch, err := srv.Challenge()
	if err != nil {
		return nil, "", err
	}
	if err := WriteDelimited(conn, success(ch)); err != nil {
		return nil, "", err
	}
	if m, err = readSASLReply(conn); err != nil {
		return nil, "", err
	}
	rspauth, err := srv.Respond(m.GetPayload())
	if err != nil {
		return nil, "", err
	}
	reply := success(rspauth)
	sec := srv.Security()
	var aesKeys [4][]byte
	if srv.QOP() == digestmd5.AuthConf && s.CipherSuites == AESCTRNoPadding && offersAES(m.GetCipherOption()) {
		bits := s.KeyBits
		if bits == 0 {
			bits = 128
		}
		r := s.Rand
		if r == nil {
			r = rand.Reader
		}
		for i, n := range []int{bits / 8, aes.BlockSize, bits / 8, aes.BlockSize} {
			aesKeys[i] = make([]byte, n)
			if _, err := io.ReadFull(r, aesKeys[i]); err != nil {
				return nil, "", err
			}
		}
		inKey, err := sec.Wrap(aesKeys[0])
		if err != nil {
			return nil, "", err
		}
		outKey, err := sec.Wrap(aesKeys[2])
		if err != nil {
			return nil, "", err
		}
		reply.CipherOption = []*hdfspb.CipherOptionProto{{Suite: hdfspb.CipherSuiteProto_AES_CTR_NOPADDING.Enum(),
			InKey: inKey, InIv: aesKeys[1], OutKey: outKey, OutIv: aesKeys[3]}}
	}
	if err := WriteDelimited(conn, reply); err != nil {
		return nil, "", err
	}
	switch {
	case aesKeys[0] != nil:
		// The DataNode decrypts with the "in" key, encrypts with "out".
		c, err := newAESConn(conn, aesKeys[2], aesKeys[3], aesKeys[0], aesKeys[1])
		return c, srv.Username(), err
	case sec != nil:
		return wrapConn(conn, sec), srv.Username(), nil
	}
	return conn, srv.Username(), nil
}

func offersAES(opts []*hdfspb.CipherOptionProto) bool {
	for _, o := range opts {
		if o.GetSuite() == hdfspb.CipherSuiteProto_AES_CTR_NOPADDING {
			return true
		}
	}
	return false
}

// tokenCredentials: the username is the base64 block token identifier.
func (s *SASLServer) tokenCredentials(user string) (string, error) {
	if s.TokenPassword == nil {
		return "", errors.New("no block token verifier")
	}
	if len(user) > base64.StdEncoding.EncodedLen(maxIdentifier) {
		return "", tokenRefusal{errors.New("Block token is not valid: identifier too long")}
	}
	id, err := base64.StdEncoding.DecodeString(user)
	if err != nil {
		return "", tokenRefusal{fmt.Errorf("Block token is not valid: username is not base64: %v", err)}
	}
	p, err := s.TokenPassword(id)
	if err != nil {
		return "", tokenRefusal{err}
	}
	return base64.StdEncoding.EncodeToString(p), nil
}

// maxIdentifier bounds a block token identifier (blocktoken.MaxIdentifierLen).
const maxIdentifier = 4096

// keyCredentials: the username is "keyId blockPoolId base64(nonce)".
func (s *SASLServer) keyCredentials(user string) (string, error) {
	parts := strings.Split(user, " ")
	if len(parts) != 3 {
		return "", fmt.Errorf("Provided name '%s' has %d components instead of the expected 3.", user, len(parts))
	}
	id, err := strconv.ParseInt(parts[0], 10, 32)
	if err != nil {
		return "", fmt.Errorf("malformed key id %q", parts[0])
	}
	nonce, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(nonce) > 64 {
		return "", fmt.Errorf("malformed nonce %q", parts[2])
	}
	if s.EncryptionKey == nil {
		return "", errors.New("no data encryption keys")
	}
	k, err := s.EncryptionKey(int32(id), parts[1], nonce)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(k), nil
}

// aesConn is AES/CTR over a connection: one stream each way (Hadoop's
// CryptoInputStream and CryptoOutputStream with AES/CTR/NoPadding).
type aesConn struct {
	net.Conn
	enc cipher.Stream
	dec cipher.Stream
}

func newAESConn(c net.Conn, encKey, encIV, decKey, decIV []byte) (net.Conn, error) {
	eb, err := aes.NewCipher(encKey)
	if err != nil {
		return nil, fmt.Errorf("datatransfer: AES key: %w", err)
	}
	db, err := aes.NewCipher(decKey)
	if err != nil {
		return nil, fmt.Errorf("datatransfer: AES key: %w", err)
	}
	if len(encIV) != aes.BlockSize || len(decIV) != aes.BlockSize {
		return nil, errors.New("datatransfer: AES IV is not 16 bytes")
	}
	return &aesConn{Conn: c, enc: cipher.NewCTR(eb, encIV), dec: cipher.NewCTR(db, decIV)}, nil
}

func (c *aesConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.dec.XORKeyStream(p[:n], p[:n])
	return n, err
}

func (c *aesConn) Write(p []byte) (int, error) {
	b := make([]byte, len(p))
	c.enc.XORKeyStream(b, p)
	// A short write would desynchronise the stream; the connection is
	// then useless, as with any write error.
	return c.Conn.Write(b)
}

func (c *aesConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Dialer connects to DataNodes' transfer ports: every client of
// DataTransferProtocol (the hdfs client, the DataNode's pipeline,
// replication and balancer copies, the balancer) dials with one, so the
// SASL handshake happens wherever the configuration asks for it.
type Dialer struct {
	// Timeout bounds the connect (default 10 s).
	Timeout time.Duration
	// SASL, when enabled, is the handshake to do after connecting.
	SASL *SASLClient
}

// Dial connects to addr and does the handshake for an op carrying token.
// A nil Dialer dials without SASL.
func (d *Dialer) Dial(ctx context.Context, addr string, token *hdfspb.TokenProto) (net.Conn, error) {
	timeout := 10 * time.Second
	if d != nil && d.Timeout > 0 {
		timeout = d.Timeout
	}
	nd := net.Dialer{Timeout: timeout}
	raw, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if d == nil || !d.SASL.Enabled() {
		return raw, nil
	}
	c, err := d.SASL.Handshake(ctx, raw, token)
	if err != nil {
		raw.Close()
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	return c, nil
}
