package delegation

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Kind is the token kind of HDFS delegation tokens on IPC
// (DelegationTokenIdentifier.HDFS_DELEGATION_KIND).
const Kind = "HDFS_DELEGATION_TOKEN"

// WebHDFSKind is the kind the NameNode's WebHDFS gives the tokens it
// hands out over http (WebHdfsConstants.WEBHDFS_TOKEN_KIND); the
// identifier is the same.
const WebHDFSKind = "WEBHDFS delegation"

// identifierVersion is AbstractDelegationTokenIdentifier.VERSION.
const identifierVersion = 0

// MaxIdentifier bounds an identifier or password accepted from a peer:
// three Texts of at most maxText and five numbers.
const MaxIdentifier = 3*(maxText+5) + 5*9 + 1

// Identifier is Hadoop's DelegationTokenIdentifier: who owns the token,
// who may renew it, the real user when the owner was proxied, when it
// was issued and the latest it may live to (ms since the epoch), its
// sequence number and the id of the master key its password is made
// with.
type Identifier struct {
	Owner, Renewer, RealUser string
	IssueDate, MaxDate       int64
	SequenceNumber           int32
	MasterKeyID              int32
}

// Bytes is id's Writable encoding (AbstractDelegationTokenIdentifier.write):
// version byte 0, owner, renewer and real user as Text, issue and max
// date as vlong, sequence number and master key id as vint.
func (id Identifier) Bytes() []byte {
	b := []byte{identifierVersion}
	b = appendText(b, id.Owner)
	b = appendText(b, id.Renewer)
	b = appendText(b, id.RealUser)
	b = appendVLong(b, id.IssueDate)
	b = appendVLong(b, id.MaxDate)
	b = appendVLong(b, int64(id.SequenceNumber))
	return appendVLong(b, int64(id.MasterKeyID))
}

// DecodeIdentifier parses an identifier written by Bytes (or Hadoop).
// Trailing bytes are an error.
func DecodeIdentifier(b []byte) (Identifier, error) {
	if len(b) > MaxIdentifier {
		return Identifier{}, fmt.Errorf("delegation: identifier of %d bytes is too long", len(b))
	}
	r := &reader{b: b}
	if v := r.byte1(); r.err == nil && v != identifierVersion {
		return Identifier{}, fmt.Errorf("Unknown version of delegation token %d", int8(v))
	}
	id := Identifier{Owner: r.text(), Renewer: r.text(), RealUser: r.text()}
	id.IssueDate = r.vlong()
	id.MaxDate = r.vlong()
	id.SequenceNumber = r.vint()
	id.MasterKeyID = r.vint()
	if r.err != nil {
		return Identifier{}, r.err
	}
	if len(r.b) != 0 {
		return Identifier{}, fmt.Errorf("delegation: %d bytes after the identifier", len(r.b))
	}
	return id, nil
}

// User is the token's short user name (the owner's, with any Kerberos
// realm and host stripped).
func (id Identifier) User() string { return ShortName(id.Owner) }

// String is HDFS DelegationTokenIdentifier.toString, which Hadoop's
// messages show: "HDFS_DELEGATION_TOKEN token 7 for alice with renewer yarn".
func (id Identifier) String() string {
	return fmt.Sprintf("%s token %d for %s with renewer %s", Kind, id.SequenceNumber, id.User(), id.Renewer)
}

// ShortName strips "/host" and "@REALM" from a name, for simple mode and
// for names already mapped: in secure mode the NameNode maps a renewer by
// hadoop.security.auth_to_local first (a principal of a realm no rule
// maps is refused), and owners and cancellers are the callers' users,
// which IPC and the SPNEGO filter have mapped by the same rules.
func ShortName(p string) string {
	if i := strings.IndexAny(p, "/@"); i >= 0 {
		return p[:i]
	}
	return p
}

// Token is Hadoop's Token: identifier, password, kind and service.
type Token struct {
	Identifier, Password []byte
	Kind, Service        string
}

// Writable is t's Writable encoding (Token.write): identifier and
// password as vint-length bytes, kind and service as Text.
func (t Token) Writable() []byte {
	b := appendBytes(nil, t.Identifier)
	b = appendBytes(b, t.Password)
	b = appendText(b, t.Kind)
	return appendText(b, t.Service)
}

func readToken(r *reader) Token {
	var t Token
	t.Identifier = r.bytes(MaxIdentifier)
	t.Password = r.bytes(MaxIdentifier)
	t.Kind = r.text()
	t.Service = r.text()
	return t
}

// EncodeToURLString is Token.encodeToUrlString: the Writable encoding in
// URL-safe base64 without padding, as WebHDFS's delegation= carries it.
func (t Token) EncodeToURLString() string {
	return base64.RawURLEncoding.EncodeToString(t.Writable())
}

// maxURLToken bounds an encoded token accepted from a URL.
const maxURLToken = 64 << 10

// DecodeURLString parses EncodeToURLString's output (padding tolerated).
func DecodeURLString(s string) (Token, error) {
	if len(s) > maxURLToken {
		return Token{}, errors.New("delegation: token string too long")
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return Token{}, fmt.Errorf("delegation: token string: %w", err)
	}
	r := &reader{b: raw}
	t := readToken(r)
	if r.err != nil {
		return Token{}, r.err
	}
	if len(r.b) != 0 {
		return Token{}, errors.New("delegation: bytes after the token")
	}
	return t, nil
}

// StableString is AbstractDelegationTokenIdentifier.toStringStable, the
// form `hdfs fetchdt --print` shows.
func (id Identifier) StableString() string {
	return fmt.Sprintf("owner=%s, renewer=%s, realUser=%s, issueDate=%d, maxDate=%d, sequenceNumber=%d, masterKeyId=%d",
		id.Owner, id.Renewer, id.RealUser, id.IssueDate, id.MaxDate, id.SequenceNumber, id.MasterKeyID)
}
