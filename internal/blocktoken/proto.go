package blocktoken

import (
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// KeysProto converts keys for the DataNode protocol (RegisterResponse and
// HeartbeatResponse block_keys).
func KeysProto(k Keys) *dnpb.BlockKeys {
	key := func(k Key) *dnpb.BlockKey {
		return &dnpb.BlockKey{KeyId: proto.Int32(k.ID), ExpiryMs: proto.Int64(k.Expiry.UnixMilli()), Secret: k.Secret}
	}
	out := &dnpb.BlockKeys{
		Enabled:          proto.Bool(k.Enabled),
		UpdateIntervalMs: proto.Uint64(uint64(k.UpdateInterval.Milliseconds())),
		TokenLifetimeMs:  proto.Uint64(uint64(k.TokenLifetime.Milliseconds())),
		Current:          key(k.Current),
	}
	for _, a := range k.All {
		out.AllKeys = append(out.AllKeys, key(a))
	}
	return out
}

// KeysFromProto is KeysProto's inverse. The message comes from the
// NameNode, which the DataNode trusts; counts are still bounded by the
// frame that carried it.
func KeysFromProto(p *dnpb.BlockKeys) Keys {
	key := func(k *dnpb.BlockKey) Key {
		return Key{ID: k.GetKeyId(), Expiry: time.UnixMilli(k.GetExpiryMs()), Secret: k.GetSecret()}
	}
	out := Keys{
		Enabled:        p.GetEnabled(),
		UpdateInterval: time.Duration(p.GetUpdateIntervalMs()) * time.Millisecond,
		TokenLifetime:  time.Duration(p.GetTokenLifetimeMs()) * time.Millisecond,
		Current:        key(p.GetCurrent()),
	}
	for _, a := range p.GetAllKeys() {
		out.All = append(out.All, key(a))
	}
	return out
}

// TokenProto converts a token for LocatedBlockProto and op headers.
func TokenProto(t Token) *hdfspb.TokenProto {
	return &hdfspb.TokenProto{Identifier: t.Identifier, Password: t.Password, Kind: proto.String(Kind), Service: proto.String("")}
}

// FromProto is the token an op header or located block carries (an empty
// one when p is nil).
func FromProto(p *hdfspb.TokenProto) Token {
	return Token{Identifier: p.GetIdentifier(), Password: p.GetPassword()}
}
