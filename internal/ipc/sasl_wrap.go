package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/types"
)

// gssWrapper protects messages with RFC 4121 Wrap tokens under the
// Kerberos session key, as the GSSAPI SASL mechanism's security layer
// does (integrity: a checksum; privacy: encrypted). Cryptography is
// gokrb5's; this only lays out the token.
type gssWrapper struct {
	key      types.EncryptionKey
	acceptor bool // this side is the server
	seal     bool // privacy
	seq      uint64
}

// Token flags of RFC 4121 section 4.2.2.
const (
	wrapFlagAcceptor = 0x01
	wrapFlagSealed   = 0x02
)

func (w *gssWrapper) usages() (send, recv uint32) {
	if w.acceptor {
		return keyusage.GSSAPI_ACCEPTOR_SEAL, keyusage.GSSAPI_INITIATOR_SEAL
	}
	return keyusage.GSSAPI_INITIATOR_SEAL, keyusage.GSSAPI_ACCEPTOR_SEAL
}

// wrap returns msg as a Wrap token, sealed when w.seal; the caller
// serialises calls to wrap.
func (w *gssWrapper) wrap(msg []byte, seal bool) ([]byte, error) {
	send, _ := w.usages()
	var flags byte
	if w.acceptor {
		flags |= wrapFlagAcceptor
	}
	seq := w.seq
	w.seq++
	if !seal {
		et, err := crypto.GetEtype(w.key.KeyType)
		if err != nil {
			return nil, err
		}
		t := gssapi.WrapToken{Flags: flags, EC: uint16(et.GetHMACBitLength() / 8), SndSeqNum: seq, Payload: msg}
		if err := t.SetCheckSum(w.key, send); err != nil {
			return nil, err
		}
		return t.Marshal()
	}
	flags |= wrapFlagSealed
	hdr := make([]byte, gssapi.HdrLen)
	hdr[0], hdr[1], hdr[2], hdr[3] = 0x05, 0x04, flags, gssapi.FillerByte
	binary.BigEndian.PutUint64(hdr[8:], seq) // EC = RRC = 0
	plain := append(append(make([]byte, 0, len(msg)+len(hdr)), msg...), hdr...)
	et, err := crypto.GetEtype(w.key.KeyType)
	if err != nil {
		return nil, err
	}
	_, ct, err := et.EncryptMessage(w.key.KeyValue, plain, send)
	if err != nil {
		return nil, err
	}
	return append(hdr, ct...), nil
}

// unwrap checks and opens a Wrap token from the peer.
func (w *gssWrapper) unwrap(tok []byte) ([]byte, error) {
	_, recv := w.usages()
	if len(tok) < gssapi.HdrLen || tok[0] != 0x05 || tok[1] != 0x04 || tok[3] != gssapi.FillerByte {
		return nil, errors.New("not a GSS Wrap token")
	}
	flags := tok[2]
	if (flags&wrapFlagAcceptor != 0) == w.acceptor {
		return nil, errors.New("GSS Wrap token sent in the wrong direction")
	}
	ec := int(binary.BigEndian.Uint16(tok[4:6]))
	rrc := int(binary.BigEndian.Uint16(tok[6:8]))
	seq := binary.BigEndian.Uint64(tok[8:16])
	data := tok[gssapi.HdrLen:]
	if len(data) > 0 && rrc%len(data) != 0 {
		// Undo the right rotation (MIT rotates sealed tokens).
		r := rrc % len(data)
		data = append(append([]byte{}, data[r:]...), data[:r]...)
	}
	if flags&wrapFlagSealed == 0 {
		if ec > len(data) {
			return nil, errors.New("GSS Wrap token shorter than its checksum")
		}
		t := gssapi.WrapToken{Flags: flags, EC: uint16(ec), SndSeqNum: seq, Payload: data[:len(data)-ec], CheckSum: data[len(data)-ec:]}
		if ok, err := t.Verify(w.key, recv); !ok {
			return nil, fmt.Errorf("GSS Wrap token checksum: %v", err)
		}
		return t.Payload, nil
	}
	plain, err := crypto.DecryptMessage(data, w.key, recv)
	if err != nil {
		return nil, fmt.Errorf("GSS Wrap token: %w", err)
	}
	if len(plain) < gssapi.HdrLen+ec {
		return nil, errors.New("GSS Wrap token too short")
	}
	return plain[:len(plain)-gssapi.HdrLen-ec], nil
}
