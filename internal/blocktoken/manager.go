package blocktoken

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// Key is a block key: an id, when it stops verifying tokens, and the
// HMAC secret.
type Key struct {
	ID     int32
	Expiry time.Time
	Secret []byte
}

// Keys is what the NameNode hands DataNodes (Hadoop's ExportedBlockKeys).
type Keys struct {
	Enabled        bool
	UpdateInterval time.Duration
	TokenLifetime  time.Duration
	Current        Key
	All            []Key
}

// Config configures a Manager. Zero durations take Hadoop's defaults.
type Config struct {
	// BlockPoolID is the pool tokens are minted for and checked against.
	BlockPoolID string
	// Enabled is dfs.block.access.token.enable: a master exports it so
	// DataNodes know whether to check tokens. (Keys exist either way: the
	// NameNode also signs its WebHDFS redirects with them.)
	Enabled bool
	// KeyUpdateInterval is how often a master makes a new key
	// (dfs.block.access.key.update.interval, 600 minutes).
	KeyUpdateInterval time.Duration
	// TokenLifetime is how long a token is good for
	// (dfs.block.access.token.lifetime, 600 minutes).
	TokenLifetime time.Duration
	// Now is the clock (default time.Now); Rand the key source (default
	// crypto/rand).
	Now  func() time.Time
	Rand io.Reader
}

// Defaults of Config, Hadoop's.
const (
	DefaultKeyUpdateInterval = 600 * time.Minute
	DefaultTokenLifetime     = 600 * time.Minute
	secretLen                = 64 // Hadoop's SecretManager key length for HmacSHA1
)

// Manager mints and checks tokens for one block pool. A master (the
// NameNode's) makes and rolls keys; a worker (a DataNode's) holds the
// keys it was given. It is safe for concurrent use.
type Manager struct {
	cfg    Config
	master bool

	mu      sync.RWMutex
	keys    map[int32]Key // every key that may still verify a token
	current Key           // signs new tokens; Secret nil until a worker imports keys
	next    Key           // a master's key after current, exported ahead of use
	nextID  int32
	rolled  time.Time // when the current key became current (master)
}

// NewMaster returns the NameNode's manager, with a first key made.
func NewMaster(cfg Config) (*Manager, error) {
	m := newManager(cfg, true)
	var seed [4]byte
	if _, err := io.ReadFull(m.cfg.Rand, seed[:]); err != nil {
		return nil, fmt.Errorf("blocktoken: %w", err)
	}
	// A random start, as Hadoop's, so ids from a restarted NameNode are
	// unlikely to collide with keys DataNodes still hold.
	m.nextID = int32(binary.BigEndian.Uint32(seed[:]) & 0x3fffffff)
	if err := m.roll(); err != nil {
		return nil, err
	}
	return m, nil
}

// NewWorker returns a DataNode's manager; it checks nothing until
// ImportKeys gives it keys.
func NewWorker(cfg Config) *Manager { return newManager(cfg, false) }

func newManager(cfg Config, master bool) *Manager {
	if cfg.KeyUpdateInterval <= 0 {
		cfg.KeyUpdateInterval = DefaultKeyUpdateInterval
	}
	if cfg.TokenLifetime <= 0 {
		cfg.TokenLifetime = DefaultTokenLifetime
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	return &Manager{cfg: cfg, master: master, keys: map[int32]Key{}}
}

// roll makes the next key current and a new next key, and forgets
// expired keys. The next key is exported a whole interval before it signs
// anything, so DataNodes know it before clients bring its tokens (as
// Hadoop's currentKey/nextKey). m.mu is held or m is not yet shared.
func (m *Manager) roll() error {
	now := m.cfg.Now()
	u, l := m.cfg.KeyUpdateInterval, m.cfg.TokenLifetime
	if m.next.Secret == nil {
		k, err := m.newKey(now.Add(2*u + l))
		if err != nil {
			return err
		}
		m.next = k
	}
	m.current = m.next
	m.current.Expiry = now.Add(2*u + l)
	m.keys[m.current.ID] = m.current
	k, err := m.newKey(now.Add(3*u + l))
	if err != nil {
		return err
	}
	m.next = k
	m.keys[k.ID] = k
	m.rolled = now
	m.expire(now)
	return nil
}

func (m *Manager) newKey(expiry time.Time) (Key, error) {
	secret := make([]byte, secretLen)
	if _, err := io.ReadFull(m.cfg.Rand, secret); err != nil {
		return Key{}, fmt.Errorf("blocktoken: making a key: %w", err)
	}
	k := Key{ID: m.nextID, Expiry: expiry, Secret: secret}
	m.nextID = (m.nextID + 1) & 0x7fffffff
	return k, nil
}

func (m *Manager) expire(now time.Time) {
	for id, k := range m.keys {
		if now.After(k.Expiry) && id != m.current.ID && id != m.next.ID {
			delete(m.keys, id)
		}
	}
}

// Tick rolls the master's key once KeyUpdateInterval has passed since the
// last roll, and reports whether it did (the NameNode then sends DataNodes
// the new keys). Call it periodically; a worker's Tick only forgets
// expired keys.
func (m *Manager) Tick() (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.Now()
	if !m.master {
		m.expire(now)
		return false, nil
	}
	if now.Sub(m.rolled) < m.cfg.KeyUpdateInterval {
		return false, nil
	}
	return true, m.roll()
}

// ExportKeys returns the keys for DataNodes.
func (m *Manager) ExportKeys() Keys {
	m.mu.RLock()
	defer m.mu.RUnlock()
	all := make([]Key, 0, len(m.keys))
	for _, k := range m.keys {
		all = append(all, k)
	}
	slices.SortFunc(all, func(a, b Key) int { return int(a.ID) - int(b.ID) })
	return Keys{Enabled: m.cfg.Enabled, UpdateInterval: m.cfg.KeyUpdateInterval, TokenLifetime: m.cfg.TokenLifetime, Current: m.current, All: all}
}

// ImportKeys replaces a worker's keys with the NameNode's.
func (m *Manager) ImportKeys(k Keys) error {
	if m.master {
		return errors.New("blocktoken: a master makes its own keys")
	}
	if len(k.Current.Secret) == 0 {
		return errors.New("blocktoken: imported keys have no current key")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if k.TokenLifetime > 0 {
		m.cfg.TokenLifetime = k.TokenLifetime
	}
	m.keys = map[int32]Key{}
	for _, key := range k.All {
		m.keys[key.ID] = key
	}
	m.keys[k.Current.ID] = k.Current
	m.current = k.Current
	return nil
}

// Token is a minted token: Hadoop's Token with kind HDFS_BLOCK_TOKEN and
// an empty service.
type Token struct {
	Identifier []byte
	Password   []byte
}

// Mint returns a token for user on block blockID with the given modes,
// good for TokenLifetime.
func (m *Manager) Mint(user string, blockID int64, modes []AccessMode, storageTypes, storageIDs []string) (Token, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.current.Secret == nil {
		return Token{}, errors.New("blocktoken: no block key yet")
	}
	id := &Identifier{
		ExpiryMillis: m.cfg.Now().Add(m.cfg.TokenLifetime).UnixMilli(),
		KeyID:        m.current.ID,
		User:         user,
		BlockPoolID:  m.cfg.BlockPoolID,
		BlockID:      blockID,
		Modes:        modes,
		StorageTypes: storageTypes,
		StorageIDs:   storageIDs,
	}
	b := id.Encode()
	return Token{Identifier: b, Password: sign(m.current.Secret, b)}, nil
}

func sign(secret, b []byte) []byte {
	h := hmac.New(sha1.New, secret)
	h.Write(b)
	return h.Sum(nil)
}

// InvalidTokenError is a refused token; the DataNode answers
// ERROR_ACCESS_TOKEN with its message, which Hadoop's clients turn into
// InvalidBlockTokenException.
type InvalidTokenError struct{ Msg string }

func (e *InvalidTokenError) Error() string { return e.Msg }

func invalid(format string, args ...any) error {
	return &InvalidTokenError{Msg: fmt.Sprintf(format, args...)}
}

// Check verifies that t allows mode on block blockID of this manager's
// pool, and returns its identifier.
func (m *Manager) Check(t Token, blockID int64, mode AccessMode) (*Identifier, error) {
	id, err := Decode(t.Identifier)
	if err != nil {
		return nil, invalid("Block token is not valid: %v", err)
	}
	m.mu.RLock()
	k, ok := m.keys[id.KeyID]
	m.mu.RUnlock()
	now := m.cfg.Now()
	switch {
	case !ok || now.After(k.Expiry):
		return nil, invalid("Can't re-compute password for %s, since the required block key (keyID=%d) doesn't exist.", id, id.KeyID)
	case !hmac.Equal(sign(k.Secret, t.Identifier), t.Password):
		return nil, invalid("Block token with %s doesn't have the correct token password", id)
	case now.UnixMilli() > id.ExpiryMillis:
		return nil, invalid("Block token with %s is expired.", id)
	case id.BlockPoolID != m.cfg.BlockPoolID || id.BlockID != blockID:
		return nil, invalid("Block token with %s doesn't apply to block %s:blk_%d", id, m.cfg.BlockPoolID, blockID)
	case !id.Allows(mode):
		return nil, invalid("Block token with %s doesn't have %s permission", id, mode)
	}
	return id, nil
}
