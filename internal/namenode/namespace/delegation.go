package namespace

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/proto/namenodepb"
)

// Delegation tokens: the secret manager's state (package delegation) is
// part of the namespace, so that its changes are edits like any other:
// applied by Apply on the active NameNode, at replay and on HA followers,
// and saved in the image header (fields 60-69).

// Tokens is the delegation token state. Callers hold the namesystem lock.
func (ns *Tree) Tokens() *delegation.State { return ns.tokens }

// UpdateMasterKey makes k the current master key (OP_UPDATE_MASTER_KEY).
func UpdateMasterKey(k delegation.Key) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_UpdateMasterKey{UpdateMasterKey: &namenodepb.OpUpdateMasterKey{Key: keyProto(k)}}}}
}

// GetDelegationToken records an issued token valid until renewDate.
func GetDelegationToken(id delegation.Identifier, renewDate int64) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_GetDelegationToken{GetDelegationToken: &namenodepb.OpGetDelegationToken{
		Token: &namenodepb.DelegationTokenRecord{Identifier: id.Bytes(), RenewDate: proto.Int64(renewDate)},
	}}}}
}

// RenewDelegationToken records a token's new renew date.
func RenewDelegationToken(id delegation.Identifier, renewDate int64) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_RenewDelegationToken{RenewDelegationToken: &namenodepb.OpRenewDelegationToken{
		Token: &namenodepb.DelegationTokenRecord{Identifier: id.Bytes(), RenewDate: proto.Int64(renewDate)},
	}}}}
}

// CancelDelegationToken records a token's cancellation.
func CancelDelegationToken(id delegation.Identifier) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_CancelDelegationToken{CancelDelegationToken: &namenodepb.OpCancelDelegationToken{
		Identifier: id.Bytes(),
	}}}}
}

func keyProto(k delegation.Key) *namenodepb.DelegationKey {
	return &namenodepb.DelegationKey{Id: proto.Int32(k.ID), Created: proto.Int64(k.Created), Expiry: proto.Int64(k.Expiry), Secret: k.Secret}
}

func keyFrom(p *namenodepb.DelegationKey) delegation.Key {
	return delegation.Key{ID: p.GetId(), Created: p.GetCreated(), Expiry: p.GetExpiry(), Secret: p.GetSecret()}
}

// applyDelegationOp applies one of the delegation token edits.
func (ns *Tree) applyDelegationOp(op *namenodepb.EditOp) error {
	switch o := op.Op.(type) {
	case *namenodepb.EditOp_UpdateMasterKey:
		if err := ns.tokens.AddKey(keyFrom(o.UpdateMasterKey.GetKey())); err != nil {
			return replayErr("%v", err)
		}
		return nil
	case *namenodepb.EditOp_GetDelegationToken:
		rec := o.GetDelegationToken.GetToken()
		id, err := delegation.DecodeIdentifier(rec.GetIdentifier())
		if err != nil {
			return replayErr("getDelegationToken: %v", err)
		}
		if err := ns.tokens.AddToken(id, rec.GetRenewDate()); err != nil {
			return replayErr("%v", err)
		}
		return nil
	case *namenodepb.EditOp_RenewDelegationToken:
		rec := o.RenewDelegationToken.GetToken()
		id, err := delegation.DecodeIdentifier(rec.GetIdentifier())
		if err != nil {
			return replayErr("renewDelegationToken: %v", err)
		}
		if err := ns.tokens.RenewToken(id, rec.GetRenewDate()); err != nil {
			return replayErr("%v", err)
		}
		return nil
	case *namenodepb.EditOp_CancelDelegationToken:
		id, err := delegation.DecodeIdentifier(o.CancelDelegationToken.GetIdentifier())
		if err != nil {
			return replayErr("cancelDelegationToken: %v", err)
		}
		return ns.tokens.CancelToken(id)
	}
	return replayErr("not a delegation token edit: %T", op.Op)
}

// delegationHeader puts the token state into an image header.
func (ns *Tree) delegationHeader(hdr *namenodepb.ImageHeader) {
	for _, k := range ns.tokens.Keys() {
		hdr.DelegationKeys = append(hdr.DelegationKeys, keyProto(k))
	}
	for _, t := range ns.tokens.Tokens() {
		hdr.DelegationTokens = append(hdr.DelegationTokens, &namenodepb.DelegationTokenRecord{Identifier: t.ID.Bytes(), RenewDate: proto.Int64(t.RenewDate)})
	}
	seq, last, cur := ns.tokens.Counters()
	hdr.DelegationSequence = proto.Int32(seq)
	hdr.DelegationLastKeyId = proto.Int32(last)
	hdr.DelegationCurrentKeyId = proto.Int32(cur)
}

// loadDelegation restores the token state from an image header.
func (ns *Tree) loadDelegation(hdr *namenodepb.ImageHeader) error {
	keys := make([]delegation.Key, len(hdr.GetDelegationKeys()))
	for i, k := range hdr.GetDelegationKeys() {
		keys[i] = keyFrom(k)
	}
	tokens := make([]delegation.TokenInfo, len(hdr.GetDelegationTokens()))
	for i, t := range hdr.GetDelegationTokens() {
		id, err := delegation.DecodeIdentifier(t.GetIdentifier())
		if err != nil {
			return fmt.Errorf("namenode: image delegation token %d: %w", i, err)
		}
		tokens[i] = delegation.TokenInfo{ID: id, RenewDate: t.GetRenewDate()}
	}
	st, err := delegation.Restore(keys, tokens, hdr.GetDelegationSequence(), hdr.GetDelegationLastKeyId(), hdr.GetDelegationCurrentKeyId())
	if err != nil {
		return fmt.Errorf("namenode: image: %w", err)
	}
	ns.tokens = st
	return nil
}
