package security

import (
	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/asnAppTag"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/iana/msgtype"
	"github.com/jcmturner/gokrb5/v8/messages"
)

// APRepToken is the GSS KRB5 token (RFC 4121 section 4.1, token id 02 00)
// holding the AP-REP that proves the server to a client that asked for
// mutual authentication: the authenticator's time encrypted in the
// ticket's session key (RFC 4120 section 3.2.4), with seq as the
// acceptor's initial sequence number (0: none, as HTTP uses no
// per-message tokens). Built from gokrb5's types and crypto; the SASL
// GSSAPI mechanism sends it as is, SPNEGO inside a NegTokenResp.
func APRepToken(req *messages.APReq, seq int64) ([]byte, error) {
	part := messages.EncAPRepPart{CTime: req.Authenticator.CTime, Cusec: req.Authenticator.Cusec, SequenceNumber: seq}
	pb, err := asn1.Marshal(part)
	if err != nil {
		return nil, err
	}
	pb = asn1tools.AddASNAppTag(pb, asnAppTag.EncAPRepPart)
	ed, err := crypto.GetEncryptedData(pb, req.Ticket.DecryptedEncPart.Key, keyusage.AP_REP_ENCPART, 0)
	if err != nil {
		return nil, err
	}
	rb, err := asn1.Marshal(messages.APRep{PVNO: 5, MsgType: msgtype.KRB_AP_REP, EncPart: ed})
	if err != nil {
		return nil, err
	}
	rb = asn1tools.AddASNAppTag(rb, asnAppTag.APREP)
	oid, err := asn1.Marshal(gssapi.OIDKRB5.OID())
	if err != nil {
		return nil, err
	}
	return asn1tools.AddASNAppTag(append(append(oid, 0x02, 0x00), rb...), 0), nil
}
