package blocktoken

import (
	"encoding/base64"
	"strings"
)

// A redirect token is the NameNode's signature on a WebHDFS redirect to a
// DataNode: it binds the user, the operation and the path the NameNode
// checked, so a DataNode's WebHDFS serves only requests the NameNode
// approved (and cannot be used to reach a NameNode the caller could not
// reach). It is a block token for block 0 whose storage ids are
// "webhdfs", the operation and the path, carried in one URL parameter as
// base64url(identifier) "." base64url(password).

// RedirectParam is the WebHDFS query parameter that carries it.
const RedirectParam = "strata.token"

const redirectTag = "webhdfs"

// MintRedirect signs a redirect for user's op (OPEN, CREATE, APPEND, ...)
// on path, with mode Read or Write.
func (m *Manager) MintRedirect(user, op, path string, mode AccessMode) (string, error) {
	t, err := m.Mint(user, 0, []AccessMode{mode}, nil, []string{redirectTag, op, path})
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(t.Identifier) + "." + enc.EncodeToString(t.Password), nil
}

// CheckRedirect verifies a redirect parameter for user's op on path.
func (m *Manager) CheckRedirect(param, user, op, path string, mode AccessMode) error {
	idPart, pwPart, ok := strings.Cut(param, ".")
	if !ok || len(param) > 2*MaxIdentifierLen {
		return invalid("WebHDFS redirect token is malformed")
	}
	enc := base64.RawURLEncoding
	ident, err1 := enc.DecodeString(idPart)
	pw, err2 := enc.DecodeString(pwPart)
	if err1 != nil || err2 != nil {
		return invalid("WebHDFS redirect token is malformed")
	}
	id, err := m.Check(Token{Identifier: ident, Password: pw}, 0, mode)
	if err != nil {
		return err
	}
	if id.User != user || len(id.StorageIDs) != 3 || id.StorageIDs[0] != redirectTag || id.StorageIDs[1] != op || id.StorageIDs[2] != path {
		return invalid("WebHDFS redirect token for %s does not allow %s of %s by %s", id, op, path, user)
	}
	return nil
}
