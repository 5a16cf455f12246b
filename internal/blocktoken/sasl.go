package blocktoken

import (
	"crypto/hmac"
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
// data encryption key instead (MintEncryptionKey): a random nonce and the
// HMAC of the nonce under the current block key, which any DataNode
// holding the key recomputes (EncryptionKey).

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
	nonce := make([]byte, 8)
	if _, err := io.ReadFull(m.cfg.Rand, nonce); err != nil {
		return DataEncryptionKey{}, fmt.Errorf("blocktoken: %w", err)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.current.Secret == nil {
		return DataEncryptionKey{}, fmt.Errorf("blocktoken: no block key yet")
	}
	return DataEncryptionKey{KeyID: m.current.ID, BlockPoolID: m.cfg.BlockPoolID, Nonce: nonce,
		Key: sign(m.current.Secret, nonce), Expiry: m.cfg.Now().Add(m.cfg.TokenLifetime), Algorithm: algorithm}, nil
}

// EncryptionKey recomputes the encryption key of (keyID, pool, nonce), as
// Hadoop's retrieveDataEncryptionKey.
func (m *Manager) EncryptionKey(keyID int32, pool string, nonce []byte) ([]byte, error) {
	if pool != m.cfg.BlockPoolID {
		return nil, &UnknownKeyError{Msg: fmt.Sprintf("Block pool %s is not found", pool)}
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
