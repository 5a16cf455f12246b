package namespace

import (
	"fmt"
	"log/slog"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/proto/namenodepb"
)

// Delegation tokens: the secret manager's state (package delegation) is
// part of the namespace, so that its changes are edits like any other:
// applied by Apply on the active NameNode, at replay and on HA followers,
// and saved in the image: keys and counters in the header (fields
// 60-69), each live token as a DelegationTokenRecord record of its own
// after the snapshot sections.

// Tokens is the delegation token state. Callers hold the namesystem lock.
func (ns *Tree) Tokens() *delegation.State { return ns.tokens }

// UpdateMasterKey makes k the current master key (OP_UPDATE_MASTER_KEY);
// the key it replaces gets expiry retiredExpiry if that is later
// (delegation.RetiredExpiry, decided by the caller so apply reads no
// clock).
func UpdateMasterKey(k delegation.Key, retiredExpiry int64) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_UpdateMasterKey{UpdateMasterKey: &namenodepb.OpUpdateMasterKey{
		Key: keyProto(k), RetiredExpiry: proto.Int64(retiredExpiry),
	}}}}
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
		if err := ns.tokens.AddKey(keyFrom(o.UpdateMasterKey.GetKey()), o.UpdateMasterKey.GetRetiredExpiry()); err != nil {
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

// delegationHeader puts the keys and counters into an image header, and
// the number of token records writeDelegationTokens writes.
func (ns *Tree) delegationHeader(hdr *namenodepb.ImageHeader) {
	for _, k := range ns.tokens.Keys() {
		hdr.DelegationKeys = append(hdr.DelegationKeys, keyProto(k))
	}
	seq, last, cur := ns.tokens.Counters()
	hdr.DelegationSequence = proto.Int32(seq)
	hdr.DelegationLastKeyId = proto.Int32(last)
	hdr.DelegationCurrentKeyId = proto.Int32(cur)
	hdr.DelegationTokenCount = proto.Uint64(uint64(ns.tokens.Len()))
}

// writeDelegationTokens writes each live token as its own record.
func (ns *Tree) writeDelegationTokens(put func(proto.Message) error) error {
	for _, t := range ns.tokens.Tokens() {
		if err := put(&namenodepb.DelegationTokenRecord{Identifier: t.ID.Bytes(), RenewDate: proto.Int64(t.RenewDate)}); err != nil {
			return err
		}
	}
	return nil
}

// loadDelegation restores the token state from an image header and the
// token records that follow the snapshots. A token whose master key is
// missing is dropped with a warning (delegation.Restore).
func (ns *Tree) loadDelegation(hdr *namenodepb.ImageHeader, next func(proto.Message) error) error {
	keys := make([]delegation.Key, len(hdr.GetDelegationKeys()))
	for i, k := range hdr.GetDelegationKeys() {
		keys[i] = keyFrom(k)
	}
	// The count is read from the image: grow the slice as records
	// arrive rather than trusting it for an allocation.
	var tokens []delegation.TokenInfo
	for i := uint64(0); i < hdr.GetDelegationTokenCount(); i++ {
		var t namenodepb.DelegationTokenRecord
		if err := next(&t); err != nil {
			return fmt.Errorf("namenode: image delegation token %d of %d: %w", i, hdr.GetDelegationTokenCount(), err)
		}
		id, err := delegation.DecodeIdentifier(t.GetIdentifier())
		if err != nil {
			return fmt.Errorf("namenode: image delegation token %d: %w", i, err)
		}
		tokens = append(tokens, delegation.TokenInfo{ID: id, RenewDate: t.GetRenewDate()})
	}
	st, skipped, err := delegation.Restore(keys, tokens, hdr.GetDelegationSequence(), hdr.GetDelegationLastKeyId(), hdr.GetDelegationCurrentKeyId())
	if err != nil {
		return fmt.Errorf("namenode: image: %w", err)
	}
	for _, id := range skipped {
		slog.Warn("namenode: image delegation token dropped: its master key is not in the image", "token", id.String(), "masterKeyId", id.MasterKeyID)
	}
	ns.tokens = st
	return nil
}
