package ipc

import (
	"bytes"
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
	acceptor bool   // this side is the server
	seq      uint64 // the next token's sequence number
	// recv detects replays of the peer's tokens by their sequence
	// numbers (RFC 4121 section 4.2.3: each direction's numbers
	// increase by one from its initial value; colinmarc/hdfs starts at
	// 0, Java at the authenticator's).
	recv replayWindow
	// privacy: every token from the peer must be sealed (Java refuses
	// an unsealed one once privacy is negotiated).
	privacy bool
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

// minCipher is the shortest ciphertext gokrb5 can decrypt under et
// without slicing out of bounds: a confounder and the checksum.
func minCipher(et interface {
	GetConfounderByteSize() int
	GetHMACBitLength() int
}) int {
	return et.GetConfounderByteSize() + et.GetHMACBitLength()/8
}

// checkCipher refuses peer ciphertext too short for its enctype before
// gokrb5 decrypts it (gokrb5 panics on it).
func checkCipher(etype int32, cipher []byte) error {
	et, err := crypto.GetEtype(etype)
	if err != nil {
		return err
	}
	if len(cipher) < minCipher(et) {
		return fmt.Errorf("ciphertext of %d bytes is shorter than enctype %d's minimum %d", len(cipher), etype, minCipher(et))
	}
	return nil
}

// unwrap checks and opens a Wrap token from the peer: direction, the
// sequence number, the checksum or (sealed) the encrypted copy of the
// header, and sealing when privacy was negotiated.
func (w *gssWrapper) unwrap(tok []byte) ([]byte, error) {
	_, recv := w.usages()
	if len(tok) < gssapi.HdrLen || tok[0] != 0x05 || tok[1] != 0x04 || tok[3] != gssapi.FillerByte {
		return nil, errors.New("not a GSS Wrap token")
	}
	flags := tok[2]
	if (flags&wrapFlagAcceptor != 0) == w.acceptor {
		return nil, errors.New("GSS Wrap token sent in the wrong direction")
	}
	if flags&wrapFlagSealed == 0 && w.privacy {
		return nil, errors.New("Privacy not protected: GSS Wrap token is not sealed")
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
	var out []byte
	if flags&wrapFlagSealed == 0 {
		if ec > len(data) {
			return nil, errors.New("GSS Wrap token shorter than its checksum")
		}
		t := gssapi.WrapToken{Flags: flags, EC: uint16(ec), SndSeqNum: seq, Payload: data[:len(data)-ec], CheckSum: data[len(data)-ec:]}
		if ok, err := t.Verify(w.key, recv); !ok {
			return nil, fmt.Errorf("GSS Wrap token checksum: %v", err)
		}
		out = t.Payload
	} else {
		if err := checkCipher(w.key.KeyType, data); err != nil {
			return nil, fmt.Errorf("GSS Wrap token: %w", err)
		}
		plain, err := crypto.DecryptMessage(data, w.key, recv)
		if err != nil {
			return nil, fmt.Errorf("GSS Wrap token: %w", err)
		}
		if len(plain) < gssapi.HdrLen {
			return nil, errors.New("GSS Wrap token too short")
		}
		// The encrypted copy of the header (RRC zero) authenticates
		// the outer one, EC included; only then may EC say how much
		// filler to strip.
		inner := plain[len(plain)-gssapi.HdrLen:]
		outer := append([]byte(nil), tok[:gssapi.HdrLen]...)
		outer[6], outer[7] = 0, 0
		if !bytes.Equal(inner, outer) {
			return nil, errors.New("GSS Wrap token header does not match its encrypted copy")
		}
		if len(plain) < gssapi.HdrLen+ec {
			return nil, errors.New("GSS Wrap token too short")
		}
		out = plain[:len(plain)-gssapi.HdrLen-ec]
	}
	// Checked after authentication, so that a forged token cannot
	// move the window.
	if err := w.recv.check(seq); err != nil {
		return nil, err
	}
	return out, nil
}

// replayWindowBits is how far behind the newest token a token may
// arrive. Hadoop's server wraps replies in its handler threads and queues
// them after, so they may arrive out of order by about its handler count;
// Java's GSSAPI tolerates that too, and refuses only duplicates.
const replayWindowBits = 1024

// replayWindow accepts each sequence number once: numbers above the
// highest seen, or within replayWindowBits below it and not seen yet.
// The peer's first token sets where its numbers start.
type replayWindow struct {
	started bool
	hi      uint64 // highest number seen
	seen    [replayWindowBits / 64]uint64
}

func (r *replayWindow) bit(seq uint64) (word int, mask uint64) {
	i := seq % replayWindowBits
	return int(i / 64), 1 << (i % 64)
}

func (r *replayWindow) check(seq uint64) error {
	if !r.started || seq > r.hi {
		if !r.started || seq-r.hi >= replayWindowBits {
			r.seen = [replayWindowBits / 64]uint64{}
		} else {
			for n := r.hi + 1; n < seq; n++ {
				w, m := r.bit(n)
				r.seen[w] &^= m
			}
		}
		r.started, r.hi = true, seq
		w, m := r.bit(seq)
		r.seen[w] |= m
		return nil
	}
	if r.hi-seq >= replayWindowBits {
		return fmt.Errorf("GSS Wrap token out of sequence: number %d is too old (newest %d)", seq, r.hi)
	}
	w, m := r.bit(seq)
	if r.seen[w]&m != 0 {
		return fmt.Errorf("GSS Wrap token replayed: sequence number %d seen before", seq)
	}
	r.seen[w] |= m
	return nil
}
