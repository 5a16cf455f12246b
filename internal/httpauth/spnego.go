package httpauth

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/service"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/stratafs/strata/internal/security"
)

// The fixed Negotiate answers (RFC 4178 NegTokenResp): the challenge
// without a token, accept-incomplete naming Kerberos (the client sent a
// mechanism list without a Kerberos token), reject, and accept-completed
// without a response token (the client did not ask for mutual
// authentication).
const (
	negotiateIncomplete = "Negotiate oRQwEqADCgEBoQsGCSqGSIb3EgECAg=="
	negotiateReject     = "Negotiate oQcwBaADCgEC"
	negotiateCompleted  = "Negotiate oRQwEqADCgEAoQsGCSqGSIb3EgECAg=="
)

// errIncomplete: the token names Kerberos but carries no AP-REQ.
var errIncomplete = errors.New("SPNEGO token without a Kerberos AP-REQ")

// accepted is a verified AP-REQ: the client principal from the ticket
// (which the KDC encrypted for the service, unlike the Authenticator,
// which the client writes) and the WWW-Authenticate answer.
type accepted struct {
	name, realm string
	answer      string
}

// acceptSPNEGO is GSS_Accept_sec_context for one Kerberos token, with
// gokrb5's primitives: decode the SPNEGO NegTokenInit (or a bare KRB5
// token, as some clients send), verify the AP-REQ against the keytab
// (ticket decryption, authenticator, clock skew, replay, client address),
// and take the identity from the ticket. gokrb5's VerifyAPREQ names the
// Authenticator's crealm (its issue #577), which a client with a
// cross-realm ticket chooses, so a mismatch with the ticket is refused.
func (f *Filter) acceptSPNEGO(header, remote string) (accepted, error) {
	kind, b64, ok := strings.Cut(header, " ")
	if !ok || kind != "Negotiate" {
		return accepted{}, errNoNegotiate
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return accepted{}, fmt.Errorf("base64: %w", err)
	}
	mech := raw
	var st spnego.SPNEGOToken
	if err := st.Unmarshal(raw); err == nil {
		if !st.Init {
			return accepted{}, errors.New("not a NegTokenInit")
		}
		krb := false
		for _, m := range st.NegTokenInit.MechTypes {
			if m.Equal(gssapi.OIDKRB5.OID()) || m.Equal(gssapi.OIDMSLegacyKRB5.OID()) {
				krb = true
			}
		}
		if !krb {
			return accepted{}, errors.New("no Kerberos mechanism offered")
		}
		if len(st.NegTokenInit.MechTokenBytes) == 0 {
			return accepted{}, errIncomplete
		}
		mech = st.NegTokenInit.MechTokenBytes
	}
	var kt spnego.KRB5Token
	if err := kt.Unmarshal(mech); err != nil {
		return accepted{}, err
	}
	if !kt.IsAPReq() {
		return accepted{}, errors.New("Kerberos token is not an AP-REQ")
	}
	opts := []func(*service.Settings){service.KeytabPrincipal(f.principal), service.DecodePAC(false)}
	if h, err := types.GetHostAddress(remote); err == nil {
		opts = append(opts, service.ClientAddress(h))
	}
	req := &kt.APReq
	ok, _, err = service.VerifyAPREQ(req, service.NewSettings(f.kt, opts...))
	if err != nil {
		return accepted{}, err
	}
	if !ok {
		return accepted{}, errors.New("AP-REQ not valid")
	}
	tkt, auth := req.Ticket.DecryptedEncPart, req.Authenticator
	if !auth.CName.Equal(tkt.CName) || auth.CRealm != tkt.CRealm {
		return accepted{}, fmt.Errorf("authenticator names %s@%s, the ticket %s@%s",
			auth.CName.PrincipalNameString(), auth.CRealm, tkt.CName.PrincipalNameString(), tkt.CRealm)
	}
	a := accepted{name: tkt.CName.PrincipalNameString(), realm: tkt.CRealm, answer: negotiateCompleted}
	if mutualRequested(req) {
		tok, err := apRepToken(req)
		if err != nil {
			return accepted{}, fmt.Errorf("AP-REP: %w", err)
		}
		a.answer = "Negotiate " + base64.StdEncoding.EncodeToString(tok)
	}
	return a, nil
}

var errNoNegotiate = errors.New("no Negotiate authorization")

// mutualRequested: the AP-REQ's mutual-required option, or GSS's mutual
// flag in the authenticator checksum (RFC 4121 4.1.1), which is how
// GSS-API clients (Java's, MIT's) ask for it.
func mutualRequested(req *messages.APReq) bool {
	if types.IsFlagSet(&req.APOptions, flags.APOptionMutualRequired) {
		return true
	}
	c := req.Authenticator.Cksum
	return c.CksumType == chksumtype.GSSAPI && len(c.Checksum) >= 24 &&
		binary.LittleEndian.Uint32(c.Checksum[20:24])&gssapi.ContextFlagMutual != 0
}

// apRepToken is the SPNEGO NegTokenResp (accept-completed, Kerberos)
// whose response token is the GSS KRB5 AP-REP for req.
func apRepToken(req *messages.APReq) ([]byte, error) {
	mech, err := security.APRepToken(req, 0)
	if err != nil {
		return nil, err
	}
	resp := spnego.NegTokenResp{NegState: asn1.Enumerated(spnego.NegStateAcceptCompleted), SupportedMech: gssapi.OIDKRB5.OID(), ResponseToken: mech}
	return resp.Marshal()
}

// challenge answers a request the filter could not authenticate.
func challenge(w http.ResponseWriter, answer string) {
	w.Header().Set("WWW-Authenticate", answer)
	http.Error(w, "Authentication required", http.StatusUnauthorized)
}
