package blocktoken

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// AccessMode is what a token allows on its block (Hadoop's
// BlockTokenIdentifier.AccessMode; the names are the wire encoding).
type AccessMode uint8

// The access modes, in Hadoop's enum order.
const (
	Read AccessMode = iota
	Write
	Copy
	Replace
)

var modeNames = [...]string{"READ", "WRITE", "COPY", "REPLACE"}

func (m AccessMode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("AccessMode(%d)", m)
}

// Kind is the token kind HDFS gives block tokens.
const Kind = "HDFS_BLOCK_TOKEN"

// MaxIdentifierLen bounds an identifier's encoded size; real ones are
// well under 200 bytes.
const MaxIdentifierLen = 4096

// Identifier is a BlockTokenIdentifier.
type Identifier struct {
	ExpiryMillis int64 // Unix milliseconds after which the token is refused
	KeyID        int32
	User         string
	BlockPoolID  string
	BlockID      int64
	Modes        []AccessMode
	StorageTypes []string // storage type names (SSD, DISK, ...) the token allows writing to; may be empty
	StorageIDs   []string
	Handshake    []byte // a SASL handshake secret; empty for strata
}

// Allows reports whether the identifier carries mode m.
func (id *Identifier) Allows(m AccessMode) bool { return slices.Contains(id.Modes, m) }

func (id *Identifier) String() string {
	modes := make([]string, len(id.Modes))
	for i, m := range id.Modes {
		modes[i] = m.String()
	}
	return fmt.Sprintf("block_token_identifier (expiryDate=%d, keyId=%d, userId=%s, blockPoolId=%s, blockId=%d, access modes=[%s], storageTypes= [%s], storageIds= [%s])",
		id.ExpiryMillis, id.KeyID, id.User, id.BlockPoolID, id.BlockID, strings.Join(modes, ", "),
		strings.Join(id.StorageTypes, ", "), strings.Join(id.StorageIDs, ", "))
}

// Encode returns the identifier in Hadoop's Writable encoding.
func (id *Identifier) Encode() []byte {
	b := appendVLong(nil, id.ExpiryMillis)
	b = appendVLong(b, int64(id.KeyID))
	b = appendString(b, id.User)
	b = appendString(b, id.BlockPoolID)
	b = appendVLong(b, id.BlockID)
	b = appendVLong(b, int64(len(id.Modes)))
	for _, m := range id.Modes {
		b = appendText(b, m.String())
	}
	b = appendVLong(b, int64(len(id.StorageTypes)))
	for _, t := range id.StorageTypes {
		b = appendText(b, t)
	}
	b = appendVLong(b, int64(len(id.StorageIDs)))
	for _, s := range id.StorageIDs {
		b = appendString(b, s)
	}
	if len(id.Handshake) > 0 {
		b = appendVLong(b, int64(len(id.Handshake)))
		b = append(b, id.Handshake...)
	}
	return b
}

var errShort = errors.New("blocktoken: identifier truncated")

// Decode parses a Writable-encoded identifier. It refuses identifiers
// longer than MaxIdentifierLen, the protobuf encoding (strata's NameNode
// never mints it), unknown access modes and trailing bytes.
func Decode(b []byte) (*Identifier, error) {
	if len(b) > MaxIdentifierLen {
		return nil, fmt.Errorf("blocktoken: identifier of %d bytes exceeds %d", len(b), MaxIdentifierLen)
	}
	if len(b) > 0 && int8(b[0]) > 0 {
		return nil, errors.New("blocktoken: protobuf-encoded identifiers are not supported")
	}
	d := decoder{b: b}
	id := &Identifier{}
	id.ExpiryMillis = d.vlong()
	key := d.vlong()
	if key < math.MinInt32 || key > math.MaxInt32 {
		d.fail(fmt.Errorf("blocktoken: key id %d out of range", key))
	}
	id.KeyID = int32(key)
	id.User = d.str()
	id.BlockPoolID = d.str()
	id.BlockID = d.vlong()
	n := d.count(len(modeNames))
	for range n {
		name := d.text()
		i := slices.Index(modeNames[:], name)
		if i < 0 {
			d.fail(fmt.Errorf("blocktoken: unknown access mode %q", name))
			break
		}
		id.Modes = append(id.Modes, AccessMode(i))
	}
	for range d.count(-1) {
		id.StorageTypes = append(id.StorageTypes, d.text())
	}
	for range d.count(-1) {
		id.StorageIDs = append(id.StorageIDs, d.str())
	}
	if d.err == nil && len(d.b) > 0 {
		if n := d.count(-1); n > 0 {
			id.Handshake = d.bytes(n)
		}
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail(fmt.Errorf("blocktoken: %d trailing bytes", len(d.b)))
	}
	if d.err != nil {
		return nil, d.err
	}
	return id, nil
}

// Hadoop's WritableUtils encodings.

// appendVLong appends v as WritableUtils.writeVLong does: one byte for
// -112..127, else a length byte and the big-endian magnitude.
func appendVLong(b []byte, v int64) []byte {
	if v >= -112 && v <= 127 {
		return append(b, byte(v))
	}
	l := int64(-112)
	if v < 0 {
		v ^= -1
		l = -120
	}
	for t := v; t != 0; t >>= 8 {
		l--
	}
	b = append(b, byte(l))
	n := -(l + 112)
	if l < -120 {
		n = -(l + 120)
	}
	for i := n; i > 0; i-- {
		b = append(b, byte(v>>((i-1)*8)))
	}
	return b
}

// appendString is WritableUtils.writeString: a 4-byte length and UTF-8.
func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// appendText is Text.writeString (used by writeEnum): a VInt length and UTF-8.
func appendText(b []byte, s string) []byte {
	return append(appendVLong(b, int64(len(s))), s...)
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *decoder) vlong() int64 {
	if d.err != nil || len(d.b) == 0 {
		d.fail(errShort)
		return 0
	}
	first := int8(d.b[0])
	d.b = d.b[1:]
	if first >= -112 {
		return int64(first)
	}
	neg := first < -120
	n := int(-(int(first) + 112))
	if neg {
		n = int(-(int(first) + 120))
	}
	if n > len(d.b) {
		d.fail(errShort)
		return 0
	}
	var v int64
	for _, c := range d.b[:n] {
		v = v<<8 | int64(c)
	}
	d.b = d.b[n:]
	if neg {
		v ^= -1
	}
	return v
}

// count reads a VInt count, refusing negatives, more than max (if max >=
// 0) and more than the bytes left (every element takes at least one).
func (d *decoder) count(max int) int {
	n := d.vlong()
	if d.err != nil {
		return 0
	}
	if n < 0 || max >= 0 && n > int64(max) || n > int64(len(d.b)) {
		d.fail(fmt.Errorf("blocktoken: count %d out of range", n))
		return 0
	}
	return int(n)
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || n > len(d.b) {
		d.fail(errShort)
		return nil
	}
	v := slices.Clone(d.b[:n])
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	if d.err != nil || len(d.b) < 4 {
		d.fail(errShort)
		return ""
	}
	n := int32(binary.BigEndian.Uint32(d.b))
	d.b = d.b[4:]
	if n == -1 {
		return "" // null
	}
	if n < 0 || int(n) > len(d.b) {
		d.fail(fmt.Errorf("blocktoken: string length %d out of range", n))
		return ""
	}
	return string(d.bytes(int(n)))
}

func (d *decoder) text() string {
	n := d.count(-1)
	return string(d.bytes(n))
}
