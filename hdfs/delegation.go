package hdfs

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/nameservice"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// Token is a delegation token (Hadoop's Token<DelegationTokenIdentifier>):
// identifier, password, kind and service.
type Token = delegation.Token

// GetDelegationToken asks the NameNode for a delegation token owned by
// the client's user that renewer may renew (DistributedFileSystem.
// getDelegationToken). It returns nil, nil when the NameNode issues no
// tokens (simple authentication without
// dfs.namenode.delegation.token.always-use). The service is set to the
// NameNode address used, as Hadoop's client does.
func (c *Client) GetDelegationToken(ctx context.Context, renewer string) (*Token, error) {
	var resp hdfspb.GetDelegationTokenResponseProto
	if err := c.call(ctx, "getDelegationToken", &hdfspb.GetDelegationTokenRequestProto{Renewer: proto.String(renewer)}, &resp); err != nil {
		return nil, err
	}
	tp := resp.GetToken()
	if tp == nil {
		return nil, nil
	}
	return &Token{Identifier: tp.GetIdentifier(), Password: tp.GetPassword(), Kind: tp.GetKind(), Service: c.service}, nil
}

// tokenService is the service of a token from the NameNode(s) at addrs
// reached as authority, as Hadoop's client names them
// (SecurityUtil.buildTokenService, HAUtil.buildTokenServiceForLogicalUri):
// host:port for one NameNode, the default port 8020 filled in when the
// authority has none, or "ha-hdfs:<nameservice>" for a logical (HA) name.
func tokenService(authority string, addrs []string) string {
	if _, _, err := net.SplitHostPort(authority); err == nil {
		return authority
	}
	if len(addrs) == 1 {
		if h, _, err := net.SplitHostPort(addrs[0]); err == nil && h == authority {
			return addrs[0]
		}
	}
	return "ha-hdfs:" + authority
}

func tokenProto(t *Token) *hdfspb.TokenProto {
	return &hdfspb.TokenProto{Identifier: t.Identifier, Password: t.Password, Kind: proto.String(t.Kind), Service: proto.String(t.Service)}
}

// RenewDelegationToken extends t and returns its new expiry time (ms since
// the epoch); only the token's renewer may.
func (c *Client) RenewDelegationToken(ctx context.Context, t *Token) (int64, error) {
	var resp hdfspb.RenewDelegationTokenResponseProto
	if err := c.call(ctx, "renewDelegationToken", &hdfspb.RenewDelegationTokenRequestProto{Token: tokenProto(t)}, &resp); err != nil {
		return 0, err
	}
	return int64(resp.GetNewExpiryTime()), nil
}

// CancelDelegationToken revokes t; its owner or renewer may.
func (c *Client) CancelDelegationToken(ctx context.Context, t *Token) error {
	var resp hdfspb.CancelDelegationTokenResponseProto
	return c.call(ctx, "cancelDelegationToken", &hdfspb.CancelDelegationTokenRequestProto{Token: tokenProto(t)}, &resp)
}

// TokenService is the service of the tokens a client of authority gets
// (tokenService), its NameNodes resolved by c.
func TokenService(c *conf.Configuration, authority string) (string, error) {
	addrs, err := nameservice.Resolve(c, authority)
	if err != nil {
		return "", fmt.Errorf("hdfs: %w", err)
	}
	return tokenService(authority, addrs), nil
}
