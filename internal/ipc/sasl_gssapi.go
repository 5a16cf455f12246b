package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/service"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/ipcpb"
	"github.com/stratafs/strata/internal/security"
)

// GSSAPIMechanism is Kerberos authentication (method KERBEROS, SASL
// mechanism GSSAPI, RFC 4752) with the service's keytab.
type GSSAPIMechanism struct {
	// Principal is the server's, _HOST already substituted
	// (nn/host@REALM); its first two components are the NEGOTIATE
	// reply's protocol and serverId.
	Principal string
	Keytab    *keytab.Keytab
	// ClockSkew is krb5.conf's clockskew.
	ClockSkew time.Duration
	// QOPs is the offered hadoop.rpc.protection bitmask.
	QOPs byte
	// MaxBuffer is the largest wrapped message the server accepts, sent
	// in the security-layer offer (RFC 4752: 3 bytes).
	MaxBuffer int
}

// Auth is the KERBEROS entry of the NEGOTIATE reply.
func (g *GSSAPIMechanism) Auth() *ipcpb.RpcSaslProto_SaslAuth {
	proto_, host, _ := security.SplitPrincipal(g.Principal)
	return &ipcpb.RpcSaslProto_SaslAuth{
		Method: proto.String(string(AuthMethodKerberos)), Mechanism: proto.String("GSSAPI"),
		Protocol: proto.String(proto_), ServerId: proto.String(host),
	}
}

// Method is KERBEROS.
func (g *GSSAPIMechanism) Method() AuthMethod { return AuthMethodKerberos }

// NewSession starts one client's exchange.
func (g *GSSAPIMechanism) NewSession(remote net.Addr) (SASLSession, error) {
	return &gssSession{mech: g, remote: remote}, nil
}

// gssInitiateFailed is the message Java's GSSAPI server gives a client
// whose ticket it does not accept; the reason is logged, not sent.
const gssInitiateFailed = "GSS initiate failed"

type gssSession struct {
	mech      *GSSAPIMechanism
	remote    net.Addr
	step      int
	mutual    bool // the client asked for an AP-REP
	principal string
	qop       security.QOP
	wmu, umu  sync.Mutex
	w         *gssWrapper
}

func (s *gssSession) Step(tok []byte) ([]byte, bool, error) {
	s.step++
	switch {
	case s.step == 1:
		return s.acceptAPReq(tok)
	case s.mutual && s.step == 2:
		// The client's reply to the AP-REP is empty.
		out, err := s.offer()
		return out, false, err
	case s.step == 2, s.mutual && s.step == 3:
		return s.acceptLayer(tok)
	}
	return nil, false, errors.New("GSSAPI exchange already complete")
}

// acceptAPReq verifies the initial context token (RFC 2743 framing around
// an AP-REQ) with the keytab and offers the security layers: a Wrap token
// holding the QOP bitmask and the max buffer size (RFC 4752 section 3.1).
func (s *gssSession) acceptAPReq(tok []byte) ([]byte, bool, error) {
	var kt spnego.KRB5Token
	if err := kt.Unmarshal(tok); err != nil || !kt.IsAPReq() {
		return nil, false, gssError(fmt.Errorf("not a Kerberos AP-REQ: %v", err))
	}
	// gokrb5 slices ciphertext before checking its length.
	if err := checkCipher(kt.APReq.Ticket.EncPart.EType, kt.APReq.Ticket.EncPart.Cipher); err != nil {
		return nil, false, gssError(fmt.Errorf("ticket: %v", err))
	}
	if err := checkCipher(kt.APReq.EncryptedAuthenticator.EType, kt.APReq.EncryptedAuthenticator.Cipher); err != nil {
		return nil, false, gssError(fmt.Errorf("authenticator: %v", err))
	}
	opts := []func(*service.Settings){service.MaxClockSkew(s.mech.ClockSkew), service.DecodePAC(false)}
	if ta, ok := s.remote.(*net.TCPAddr); ok {
		opts = append(opts, service.ClientAddress(types.HostAddressFromNetIP(ta.IP)))
	}
	ok, _, err := service.VerifyAPREQ(&kt.APReq, service.NewSettings(s.mech.Keytab, opts...))
	if err != nil || !ok {
		return nil, false, gssError(fmt.Errorf("AP-REQ refused: %v", err))
	}
	// The ticket must be for this service, not another in the keytab.
	if sname := kt.APReq.Ticket.SName.PrincipalNameString() + "@" + kt.APReq.Ticket.Realm; sname != s.mech.Principal {
		return nil, false, gssError(fmt.Errorf("ticket is for %s, not %s", sname, s.mech.Principal))
	}
	key := kt.APReq.Ticket.DecryptedEncPart.Key
	if sub := kt.APReq.Authenticator.SubKey; len(sub.KeyValue) > 0 {
		key = sub // RFC 4121: the initiator's subkey protects the context
	}
	// The client is the ticket's, which the KDC vouches for; gokrb5
	// matches the authenticator's name to it but not its realm, so a
	// principal of a trusted realm could otherwise claim this one.
	enc := kt.APReq.Ticket.DecryptedEncPart
	auth := kt.APReq.Authenticator
	if !auth.CName.Equal(enc.CName) || auth.CRealm != enc.CRealm {
		return nil, false, gssError(fmt.Errorf("authenticator names %s@%s, the ticket %s@%s",
			auth.CName.PrincipalNameString(), auth.CRealm, enc.CName.PrincipalNameString(), enc.CRealm))
	}
	s.principal = enc.CName.PrincipalNameString() + "@" + enc.CRealm
	// The acceptor's sequence numbers start where the initiator's do
	// (RFC 4121 section 4.2.3 when there is no AP-REP; the AP-REP below
	// names the same number); Java's GSSAPI checks them.
	s.w = &gssWrapper{key: key, acceptor: true, seq: uint64(kt.APReq.Authenticator.SeqNumber)}
	if types.IsFlagSet(&kt.APReq.APOptions, flags.APOptionMutualRequired) {
		// The client (Java's GSSAPI, MIT) wants the server proven too: an
		// AP-REP first, the security-layer offer after its empty reply.
		rep, err := security.APRepToken(&kt.APReq, kt.APReq.Authenticator.SeqNumber)
		if err != nil {
			return nil, false, gssError(err)
		}
		s.mutual = true
		return rep, false, nil
	}
	out, err := s.offer()
	return out, false, err
}

// offer is the security-layer offer: a Wrap token holding the QOP
// bitmask and the max buffer size (RFC 4752 section 3.1).
func (s *gssSession) offer() ([]byte, error) {
	offer := make([]byte, 4)
	binary.BigEndian.PutUint32(offer, uint32(s.mech.maxBuffer()))
	offer[0] = s.mech.QOPs
	return s.w.wrap(offer, false)
}

func (g *GSSAPIMechanism) maxBuffer() int {
	if g.MaxBuffer <= 0 || g.MaxBuffer > 0xFFFFFF {
		return 0xFFFFFF
	}
	return g.MaxBuffer
}

// acceptLayer takes the client's choice of security layer.
func (s *gssSession) acceptLayer(tok []byte) ([]byte, bool, error) {
	msg, err := s.w.unwrap(tok)
	if err != nil {
		return nil, false, gssError(err)
	}
	if len(msg) < 4 {
		return nil, false, errors.New("Invalid final GSS-API token: security layer choice too short")
	}
	chosen := msg[0] & s.mech.QOPs
	// A client that echoes the offer (colinmarc/hdfs) gets the strongest
	// layer in it.
	s.qop = security.Strongest(chosen)
	if s.qop == 0 {
		return nil, false, fmt.Errorf("No common protection layer between client and server (offered %#x, chosen %#x)", s.mech.QOPs, msg[0])
	}
	s.w.privacy = s.qop == security.QOPPrivacy
	if authz := string(msg[4:]); authz != "" && authz != s.principal {
		return nil, false, fmt.Errorf("Problem with callback handler: %s may not act as %s", s.principal, authz)
	}
	return nil, true, nil
}

func gssError(err error) error {
	return &gssFailure{err: err}
}

// gssFailure is a refused ticket: the client sees only "GSS initiate
// failed", the log has why.
type gssFailure struct{ err error }

func (e *gssFailure) Error() string { return gssInitiateFailed + ": " + e.err.Error() }

func (e *gssFailure) As(target any) bool {
	if re, ok := target.(**RemoteError); ok {
		*re = &RemoteError{Class: ClassSaslException, Message: gssInitiateFailed}
		return true
	}
	return false
}

// maxWrapped is the largest wrapped request accepted: the offer's max
// buffer.
func (s *gssSession) maxWrapped() int { return s.mech.maxBuffer() }

func (s *gssSession) Principal() string { return s.principal }
func (s *gssSession) QOP() security.QOP { return s.qop }

func (s *gssSession) Wrap(msg []byte) ([]byte, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.w.wrap(msg, s.qop == security.QOPPrivacy)
}

func (s *gssSession) Unwrap(tok []byte) ([]byte, error) {
	s.umu.Lock()
	defer s.umu.Unlock()
	return s.w.unwrap(tok)
}
