package blocktoken

import (
	"crypto/hmac"
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// Credentials for SASL data transfer protection (docs/format/datatransfer-sasl.md).
// A client authenticates to a DataNode with its block token: the username
// is the identifier, the password the token's password, so the DataNode
// recomputes the password from the identifier and its block key
// (Password). With dfs.encrypt.data.transfer the NameNode hands out a
// data encryption key instead (MintEncryptionKey): a nonce and the HMAC
// of the nonce under the current block key, which any DataNode holding
// the key recomputes (EncryptionKey). The nonce is 8 random bytes and the
// key's expiry (big-endian milliseconds since the epoch), so the expiry is
// bound by the HMAC and the DataNode refuses an expired key without
// having seen it minted (Hadoop's nonce is random only, and its keys are
// good for as long as their block key, about 30 hours).

// Password recomputes the password of identifier b, as Hadoop's
// BlockTokenSecretManager.retrievePassword: the identifier must decode,
// name this manager's pool, be unexpired and name a known, unexpired key.
// Access modes are checked later, per op.
func (m *Manager) Password(b []byte) ([]byte, error) {
	id, err := Decode(b)
	if err != nil {
		return nil, invalid("Block token is not valid: %v", err)
	}
	if id.BlockPoolID != m.cfg.BlockPoolID {
		return nil, invalid("Block pool %s is not found", id.BlockPoolID)
	}
	now := m.cfg.Now()
	if now.UnixMilli() > id.ExpiryMillis {
		return nil, invalid("Block token with %s is expired.", id)
	}
	m.mu.RLock()
	k, ok := m.keys[id.KeyID]
	m.mu.RUnlock()
	if !ok || now.After(k.Expiry) {
		return nil, invalid("Can't re-compute password for %s, since the required block key (keyID=%d) doesn't exist.", id, id.KeyID)
	}
	return sign(k.Secret, b), nil
}

// DataEncryptionKey is Hadoop's DataEncryptionKey: what a client of a
// cluster with dfs.encrypt.data.transfer authenticates to DataNodes with.
type DataEncryptionKey struct {
	KeyID       int32
	BlockPoolID string
	Nonce       []byte
	Key         []byte // HMAC-SHA1 of Nonce under block key KeyID
	Expiry      time.Time
	Algorithm   string // dfs.encrypt.data.transfer.algorithm, may be empty
}

// UnknownKeyError is EncryptionKey's refusal of a key id it does not hold
// (Hadoop's InvalidEncryptionKeyException): the client should fetch a new
// data encryption key from the NameNode.
type UnknownKeyError struct{ Msg string }

func (e *UnknownKeyError) Error() string { return e.Msg }

// MintEncryptionKey returns a new data encryption key under the current
// block key, good for TokenLifetime.
func (m *Manager) MintEncryptionKey(algorithm string) (DataEncryptionKey, error) {
	nonce := make([]byte, 8, encNonceLen)
	if _, err := io.ReadFull(m.cfg.Rand, nonce); err != nil {
		return DataEncryptionKey{}, fmt.Errorf("blocktoken: %w", err)
	}
	expiry := time.UnixMilli(m.cfg.Now().Add(m.cfg.TokenLifetime).UnixMilli())
	nonce = binary.BigEndian.AppendUint64(nonce, uint64(expiry.UnixMilli()))
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.current.Secret == nil {
		return DataEncryptionKey{}, fmt.Errorf("blocktoken: no block key yet")
	}
	return DataEncryptionKey{KeyID: m.current.ID, BlockPoolID: m.cfg.BlockPoolID, Nonce: nonce,
		Key: sign(m.current.Secret, nonce), Expiry: expiry, Algorithm: algorithm}, nil
}

// encNonceLen is a data encryption key's nonce: random bytes and expiry.
const encNonceLen = 16

// EncryptionKey recomputes the encryption key of (keyID, pool, nonce), as
// Hadoop's retrieveDataEncryptionKey, and refuses an expired key (the
// client then fetches a new one).
func (m *Manager) EncryptionKey(keyID int32, pool string, nonce []byte) ([]byte, error) {
	if pool != m.cfg.BlockPoolID {
		return nil, &UnknownKeyError{Msg: fmt.Sprintf("Block pool %s is not found", pool)}
	}
	if len(nonce) != encNonceLen {
		return nil, &UnknownKeyError{Msg: fmt.Sprintf("Data encryption key nonce of %d bytes is not %d: not minted by this cluster", len(nonce), encNonceLen)}
	}
	// The expiry is trusted only after the HMAC matched, which the
	// handshake's digest checks: a forged expiry changes the key.
	if exp := time.UnixMilli(int64(binary.BigEndian.Uint64(nonce[8:]))); m.cfg.Now().After(exp) {
		return nil, &UnknownKeyError{Msg: fmt.Sprintf("Data encryption key (keyID=%d) expired at %s", keyID, exp.UTC().Format(time.RFC3339))}
	}
	m.mu.RLock()
	k, ok := m.keys[keyID]
	cur := m.current.ID
	m.mu.RUnlock()
	if !ok || m.cfg.Now().After(k.Expiry) {
		return nil, &UnknownKeyError{Msg: fmt.Sprintf("Can't re-compute encryption key for nonce, since the required block key (keyID=%d) doesn't exist. Current key: %d", keyID, cur)}
	}
	return sign(k.Secret, nonce), nil
}

// equalKeys is for tests: whether two keys are the same bytes.
func equalKeys(a, b []byte) bool { return hmac.Equal(a, b) }

// EncryptionKeyProto is k as ClientNamenodeProtocol's DataEncryptionKeyProto.
func EncryptionKeyProto(k DataEncryptionKey) *hdfspb.DataEncryptionKeyProto {
	p := &hdfspb.DataEncryptionKeyProto{KeyId: proto.Uint32(uint32(k.KeyID)), BlockPoolId: proto.String(k.BlockPoolID),
		Nonce: k.Nonce, EncryptionKey: k.Key, ExpiryDate: proto.Uint64(uint64(k.Expiry.UnixMilli()))}
	if k.Algorithm != "" {
		p.EncryptionAlgorithm = proto.String(k.Algorithm)
	}
	return p
}
