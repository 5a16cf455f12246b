package delegation

import (
	"crypto/hmac"
	"crypto/sha1"
	"fmt"
	"io"
	"sort"
	"time"
)

// Defaults of Hadoop's dfs.namenode.delegation.* keys, in milliseconds.
const (
	DefaultKeyUpdateInterval = 86400000  // dfs.namenode.delegation.key.update-interval
	DefaultMaxLifetime       = 604800000 // dfs.namenode.delegation.token.max-lifetime
	DefaultRenewInterval     = 86400000  // dfs.namenode.delegation.token.renew-interval
)

// KeyLength is the length of a master key's secret in bytes (Hadoop's
// hadoop.security.secret-manager.key-length default).
const KeyLength = 64

// Config is the secret manager's timing, in milliseconds.
type Config struct {
	KeyUpdateInterval int64
	MaxLifetime       int64
	RenewInterval     int64
}

// DefaultConfig is Hadoop's defaults.
func DefaultConfig() Config {
	return Config{KeyUpdateInterval: DefaultKeyUpdateInterval, MaxLifetime: DefaultMaxLifetime, RenewInterval: DefaultRenewInterval}
}

// Key is a master key: tokens' passwords are HMAC-SHA1 of their
// identifier under it. Created is when it became current; Expiry is when
// it may be forgotten (no token made with it can be valid after that).
type Key struct {
	ID      int32
	Created int64
	Expiry  int64
	Secret  []byte
}

// TokenInfo is a live token as the state keeps it.
type TokenInfo struct {
	ID        Identifier
	RenewDate int64 // the token is invalid after this time (ms)
	Password  []byte
}

// Error classes of the failures, Hadoop's exception class names.
const (
	ClassInvalidToken  = "org.apache.hadoop.security.token.SecretManager$InvalidToken"
	ClassAccessControl = "org.apache.hadoop.security.AccessControlException"
)

// Error is a refusal with Hadoop's exception class and message.
type Error struct {
	Class, Msg string
}

func (e *Error) Error() string { return e.Msg }

func invalid(format string, a ...any) error {
	return &Error{ClassInvalidToken, fmt.Sprintf(format, a...)}
}

func denied(format string, a ...any) error {
	return &Error{ClassAccessControl, fmt.Sprintf(format, a...)}
}

// formatTime is Hadoop's Time.formatTime (yyyy-MM-dd HH:mm:ss,SSSZ).
func formatTime(ms int64) string {
	return time.UnixMilli(ms).Format("2006-01-02 15:04:05,000-0700")
}

// State is the secret manager's persistent state: master keys, live
// tokens and the counters. It is pure data with decisions on it. Its
// changes (AddKey, AddToken, RenewToken, CancelToken) are what edit-log
// records carry, so a replica replaying the records has the same state;
// the Check* and New* methods decide what to log, from the time and
// randomness they are given, and change nothing. Not safe for concurrent
// use: the NameNode holds its namespace lock.
//
// Invariants: every token's master key is in keys (AddToken refuses
// otherwise, AddKey keeps a key while a live token names it); a token's password is the HMAC of its identifier's bytes
// under that key; the sequence number and key id only grow.
type State struct {
	keys      map[int32]Key
	current   int32 // 0: no key yet
	tokens    map[string]*TokenInfo
	seq       int32
	lastKeyID int32
}

// NewState returns an empty state.
func NewState() *State {
	return &State{keys: map[int32]Key{}, tokens: map[string]*TokenInfo{}}
}

// Password is HMAC-SHA1 of identifier under secret
// (SecretManager.createPassword).
func Password(identifier, secret []byte) []byte {
	m := hmac.New(sha1.New, secret)
	m.Write(identifier)
	return m.Sum(nil)
}

// NeedsKey reports whether a new master key must be made before a token
// is issued at now: there is none, or the current one is older than the
// update interval.
func (s *State) NeedsKey(cfg Config, now int64) bool {
	k, ok := s.keys[s.current]
	return !ok || now-k.Created >= cfg.KeyUpdateInterval
}

// NewKey makes the next master key at now from rand (Hadoop's
// updateCurrentKey: expiry now + update interval + max lifetime).
func (s *State) NewKey(cfg Config, now int64, rand io.Reader) (Key, error) {
	secret := make([]byte, KeyLength)
	if _, err := io.ReadFull(rand, secret); err != nil {
		return Key{}, err
	}
	return Key{ID: s.lastKeyID + 1, Created: now, Expiry: now + cfg.KeyUpdateInterval + cfg.MaxLifetime, Secret: secret}, nil
}

// RetiredExpiry is the expiry the current key gets when a key made at
// now replaces it (Hadoop's rollMasterKey: now + max lifetime), so that
// it outlives every token it signed. The active NameNode decides it and
// the key roll's record carries it: applying a roll reads no clock.
func RetiredExpiry(cfg Config, now int64) int64 { return now + cfg.MaxLifetime }

// AddKey makes k the current master key; the key it replaces, if any,
// gets expiry max(its expiry, retiredExpiry) (0: unchanged). It then
// forgets the tokens that expired before k was created, and the keys
// that expired before it and sign none of the live tokens left: the
// removal is part of the recorded change, so every replica forgets the
// same ones, and no live token outlives its key (whatever the timing
// configuration was when it was issued).
func (s *State) AddKey(k Key, retiredExpiry int64) error {
	if len(k.Secret) == 0 {
		return fmt.Errorf("delegation: master key %d has no secret", k.ID)
	}
	if old, ok := s.keys[s.current]; ok && old.ID != k.ID && retiredExpiry > old.Expiry {
		old.Expiry = retiredExpiry
		s.keys[old.ID] = old
	}
	s.keys[k.ID] = k
	s.current = k.ID
	if k.ID > s.lastKeyID {
		s.lastKeyID = k.ID
	}
	signing := map[int32]bool{}
	for b, t := range s.tokens {
		if t.RenewDate < k.Created {
			delete(s.tokens, b)
			continue
		}
		signing[t.ID.MasterKeyID] = true
	}
	for id, old := range s.keys {
		if old.Expiry < k.Created && id != k.ID && !signing[id] {
			delete(s.keys, id)
		}
	}
	return nil
}

// MaxUserName bounds the owner, renewer and real user of an issued
// token, in bytes. Hadoop refuses to write an identifier with a Text
// over 1 MiB; strata issues none with a name over 1 KiB, so that an
// identifier stays small (a few KiB) in every edit and image record it
// is kept in. Identifiers from peers are still decoded up to Hadoop's
// limits (MaxIdentifier).
const MaxUserName = 1024

// Check refuses (IOException) an identifier to be issued with a name
// over MaxUserName or that does not decode back to itself: the edit
// that issues it must apply on every replica.
func (id Identifier) Check() error {
	for _, f := range []struct{ what, v string }{{"owner", id.Owner}, {"renewer", id.Renewer}, {"realUser", id.RealUser}} {
		if len(f.v) > MaxUserName {
			return &Error{ClassIOException, fmt.Sprintf("%s is too long to be serialized! (%d bytes, at most %d)", f.what, len(f.v), MaxUserName)}
		}
	}
	if back, err := DecodeIdentifier(id.Bytes()); err != nil || back != id {
		return &Error{ClassIOException, fmt.Sprintf("delegation token identifier does not round-trip: %v", err)}
	}
	return nil
}

// ClassIOException is java.io.IOException, what Hadoop's identifier
// write throws for a name too long to serialize.
const ClassIOException = "java.io.IOException"

// NewIdentifier is the identifier of the next token for owner at now and
// its first renew date (createPassword: max date now + max lifetime,
// renew date now + renew interval). Make a key first if NeedsKey. It
// refuses (IOException) a name over MaxUserName, and checks that the
// identifier decodes back to itself, so that the record that issues it
// cannot fail to apply.
func (s *State) NewIdentifier(cfg Config, owner, renewer, realUser string, now int64) (Identifier, int64, error) {
	id := Identifier{
		Owner: owner, Renewer: ShortName(renewer), RealUser: realUser,
		IssueDate: now, MaxDate: now + cfg.MaxLifetime,
		SequenceNumber: s.seq + 1, MasterKeyID: s.current,
	}
	if err := id.Check(); err != nil {
		return Identifier{}, 0, err
	}
	return id, min(id.MaxDate, now+cfg.RenewInterval), nil
}

// AddToken records an issued token valid until renewDate
// (addPersistedDelegationToken); its password is computed from its key.
func (s *State) AddToken(id Identifier, renewDate int64) error {
	k, ok := s.keys[id.MasterKeyID]
	if !ok {
		return fmt.Errorf("delegation: token %v names unknown master key %d", id, id.MasterKeyID)
	}
	b := id.Bytes()
	if _, dup := s.tokens[string(b)]; dup {
		return fmt.Errorf("Same delegation token being added twice: %v", id)
	}
	s.tokens[string(b)] = &TokenInfo{ID: id, RenewDate: renewDate, Password: Password(b, k.Secret)}
	if id.SequenceNumber > s.seq {
		s.seq = id.SequenceNumber
	}
	return nil
}

// RenewToken sets a live token's renew date.
func (s *State) RenewToken(id Identifier, renewDate int64) error {
	t, ok := s.tokens[string(id.Bytes())]
	if !ok {
		return fmt.Errorf("delegation: renewal of unknown token %v", id)
	}
	t.RenewDate = renewDate
	return nil
}

// CancelToken forgets a token. Forgetting one already gone is not an
// error: a replay after its expiry removal must still succeed.
func (s *State) CancelToken(id Identifier) error {
	delete(s.tokens, string(id.Bytes()))
	return nil
}

// Retrieve returns the password of the token with identifier bytes, its
// identifier, or InvalidToken when the token is unknown (cancelled,
// forgotten) or expired at now (SecretManager.retrievePassword). This is
// what a SASL DIGEST-MD5 server needs.
func (s *State) Retrieve(identifier []byte, now int64) ([]byte, Identifier, error) {
	id, err := DecodeIdentifier(identifier)
	if err != nil {
		return nil, Identifier{}, invalid("token is malformed: %v", err)
	}
	t, ok := s.tokens[string(id.Bytes())]
	if !ok {
		return nil, id, invalid("token (%v) can't be found in cache", id)
	}
	if t.RenewDate < now {
		return nil, id, invalid("token (%v) is expired, current time: %s expected renewal time: %s", id, formatTime(now), formatTime(t.RenewDate))
	}
	return append([]byte(nil), t.Password...), id, nil
}

// Verify checks a presented token (identifier and password) at now
// (verifyToken) and returns its identifier.
func (s *State) Verify(t Token, now int64) (Identifier, error) {
	pw, id, err := s.Retrieve(t.Identifier, now)
	if err != nil {
		return id, err
	}
	if !hmac.Equal(pw, t.Password) {
		return id, invalid("token (%v) is invalid, password doesn't match", id)
	}
	return id, nil
}

// CheckRenew decides a renewal of t by renewer (a short name) at now
// (renewToken): the new renew date, or Hadoop's refusal.
func (s *State) CheckRenew(cfg Config, t Token, renewer string, now int64) (Identifier, int64, error) {
	id, err := DecodeIdentifier(t.Identifier)
	if err != nil {
		return id, 0, invalid("token is malformed: %v", err)
	}
	if id.MaxDate < now {
		return id, 0, invalid("%s tried to renew an expired token (%v) max expiration date: %s currentTime: %s", renewer, id, formatTime(id.MaxDate), formatTime(now))
	}
	if id.Renewer == "" {
		return id, 0, denied("%s tried to renew a token (%v) without a renewer", renewer, id)
	}
	if id.Renewer != renewer {
		return id, 0, denied("%s tries to renew a token (%v) with non-matching renewer %s", renewer, id, id.Renewer)
	}
	k, ok := s.keys[id.MasterKeyID]
	if !ok {
		return id, 0, invalid("Unable to find master key for keyId=%d from cache. Failed to renew an unexpired token (%v) with sequenceNumber=%d", id.MasterKeyID, id, id.SequenceNumber)
	}
	if !hmac.Equal(Password(t.Identifier, k.Secret), t.Password) {
		return id, 0, denied("%s is trying to renew a token (%v) with wrong password", renewer, id)
	}
	if _, ok := s.tokens[string(id.Bytes())]; !ok {
		return id, 0, invalid("Renewal request for unknown token (%v)", id)
	}
	return id, min(id.MaxDate, now+cfg.RenewInterval), nil
}

// CheckCancel decides a cancellation of t by canceller (cancelToken): the
// owner, or the renewer by short name, may cancel a live token.
func (s *State) CheckCancel(t Token, canceller string) (Identifier, error) {
	id, err := DecodeIdentifier(t.Identifier)
	if err != nil {
		return id, invalid("token is malformed: %v", err)
	}
	if id.Owner == "" {
		return id, invalid("Token with no owner (%v)", id)
	}
	if canceller != id.Owner && (id.Renewer == "" || ShortName(canceller) != id.Renewer) {
		return id, denied("%s is not authorized to cancel the token (%v)", canceller, id)
	}
	if _, ok := s.tokens[string(id.Bytes())]; !ok {
		return id, invalid("Token not found (%v)", id)
	}
	return id, nil
}

// Keys returns the master keys in id order; Tokens the live tokens in
// sequence order; Counters the last sequence number and key id. With
// Restore they are the image of the state.
func (s *State) Keys() []Key {
	out := make([]Key, 0, len(s.keys))
	for _, k := range s.keys {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Tokens: see Keys.
func (s *State) Tokens() []TokenInfo {
	out := make([]TokenInfo, 0, len(s.tokens))
	for _, t := range s.tokens {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID.SequenceNumber < out[j].ID.SequenceNumber })
	return out
}

// Counters: see Keys. current is the current key's id.
func (s *State) Counters() (seq, lastKeyID, current int32) { return s.seq, s.lastKeyID, s.current }

// Restore rebuilds a state from its image: keys, tokens (passwords
// recomputed) and counters. A token whose master key is not in the
// image cannot be verified or renewed: it is left out and returned in
// skipped for the caller to warn about (Hadoop's loader likewise drops
// it with a warning) rather than making the image unloadable.
func Restore(keys []Key, tokens []TokenInfo, seq, lastKeyID, current int32) (s *State, skipped []Identifier, err error) {
	s = NewState()
	for _, k := range keys {
		if len(k.Secret) == 0 {
			return nil, nil, fmt.Errorf("delegation: image master key %d has no secret", k.ID)
		}
		s.keys[k.ID] = k
	}
	for _, t := range tokens {
		if _, ok := s.keys[t.ID.MasterKeyID]; !ok {
			skipped = append(skipped, t.ID)
			s.seq = max(s.seq, t.ID.SequenceNumber)
			continue
		}
		if err := s.AddToken(t.ID, t.RenewDate); err != nil {
			return nil, nil, err
		}
	}
	s.seq = max(s.seq, seq)
	s.lastKeyID = max(lastKeyID, current)
	s.current = current
	return s, skipped, nil
}

// Len is the number of live tokens.
func (s *State) Len() int { return len(s.tokens) }
