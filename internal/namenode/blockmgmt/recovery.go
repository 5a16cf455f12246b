package blockmgmt

import "time"

// blockRecovery is a last block whose replicas the DataNodes are finishing
// with a new generation stamp: cut to a length (truncate) or finalized at
// what they hold (lease recovery). The file stays open until it is done.
type blockRecovery struct {
	truncate bool
	newLen   int64 // truncate: the block's new length
	holders  map[string]bool
	deadline time.Time
	// copyFrom is the source of a copy-on-truncate (StartCopyRecovery);
	// attempts counts the rounds of copy commands sent.
	copyFrom *Block
	attempts int
}

// RecoveryTimeout bounds the wait for every holder to report; after it the
// recovery finishes with the replicas that did.
const RecoveryTimeout = 30 * time.Second

// StartRecovery sends Recover commands for b, the last block of an open
// file, to every live DataNode that has (or is writing) a replica: they
// finish their replica at oldGS with b's (new) generation stamp, cut to
// b's length when truncate, else at what they hold.
// A standby starts none: the active NameNode recovers.
func (m *Manager) StartRecovery(b *Block, oldGS uint64, truncate bool) {
	if m.standby {
		return
	}
	now := m.now()
	rec := &blockRecovery{truncate: truncate, newLen: b.NumBytes, holders: map[string]bool{}, deadline: now.Add(RecoveryTimeout)}
	if !truncate {
		rec.newLen = -1
	}
	targets := map[string]*Datanode{}
	for _, r := range b.Replicas {
		if !r.Storage.DN.Dead {
			targets[r.Storage.DN.UUID] = r.Storage.DN
		}
	}
	for _, st := range b.Expected {
		if !st.DN.Dead {
			targets[st.DN.UUID] = st.DN
		}
	}
	for uuid, d := range targets {
		rec.holders[uuid] = true
		m.queue(d, Command{Kind: Recover, Block: BlockRef{ID: b.ID, GenStamp: oldGS}, NewGenStamp: b.GenStamp, NewLength: rec.newLen})
	}
	m.recovering[b.ID] = rec
	m.log.Info("namenode: recovering block", "block", b.String(), "file", pathOf(b), "truncate", truncate, "length", rec.newLen, "replicas", len(targets))
}

// StartCopyRecovery is StartRecovery for a copy-on-truncate: b, the new
// last block of an open file (its generation stamp and length set), is
// made by every live DataNode with a replica of src copying src's first
// b.NumBytes bytes; src, which a snapshot holds, is left as it is. The
// recovery is done when the copies are reported, as StartRecovery's.
func (m *Manager) StartCopyRecovery(b, src *Block) {
	if m.standby {
		return
	}
	rec := &blockRecovery{truncate: true, newLen: b.NumBytes, copyFrom: src}
	m.recovering[b.ID] = rec
	m.sendCopies(b, rec)
}

// sendCopies sends a round of copy commands for b to the live DataNodes
// with a good-looking replica of rec.copyFrom (one a DataNode found
// corrupt while copying is reported and skipped the next round).
func (m *Manager) sendCopies(b *Block, rec *blockRecovery) {
	src := rec.copyFrom
	rec.holders = map[string]bool{}
	rec.deadline = m.now().Add(RecoveryTimeout)
	rec.attempts++
	for _, r := range src.Replicas {
		d := r.Storage.DN
		if d.Dead || r.Corrupt || rec.holders[d.UUID] {
			continue
		}
		rec.holders[d.UUID] = true
		m.queue(d, Command{Kind: Recover, Block: BlockRef{ID: src.ID, GenStamp: src.GenStamp}, NewGenStamp: b.GenStamp, NewLength: b.NumBytes, NewBlockID: b.ID})
	}
	m.log.Info("namenode: copy-on-truncate", "block", b.String(), "from", src.String(), "file", pathOf(b), "length", b.NumBytes,
		"replicas", len(rec.holders), "attempt", rec.attempts)
}

// Recovering reports whether block id is being recovered.
func (m *Manager) Recovering(id uint64) bool { return m.recovering[id] != nil }

// RecoveryDone is a finished recovery: the file of Block can be closed
// with Block at Length, or without Block when DropLast (nothing was ever
// written to it).
type RecoveryDone struct {
	Block    *Block
	Length   int64
	DropLast bool
	Replicas int
}

// FinishedRecoveries returns the recoveries that are done at now — every
// holder reported a finalized replica with the new generation stamp, or
// the timeout passed and at least one did — and forgets them. Recoveries
// of files no longer open are dropped. A standby has none.
func (m *Manager) FinishedRecoveries(now time.Time) []RecoveryDone {
	if m.standby {
		return nil
	}
	var out []RecoveryDone
	for id, rec := range m.recovering {
		b := m.blocks.Get(id)
		if b == nil || b.File == nil || !b.File.IsUnderConstruction() {
			delete(m.recovering, id)
			continue
		}
		var got []*Replica
		for _, r := range b.Replicas {
			if r.Final && !r.Corrupt && r.GenStamp == b.GenStamp && !r.Storage.DN.Dead {
				got = append(got, r)
			}
		}
		all := len(got) >= len(rec.holders)
		if rec.copyFrom != nil && len(got) == 0 {
			// No copy yet: a copy is done only when one exists. Past the
			// deadline every source failed (or none was live): try again
			// from the replicas that still look good, until one copies.
			if now.After(rec.deadline) {
				if m.blocks.Get(rec.copyFrom.ID) != rec.copyFrom {
					m.log.Error("namenode: copy-on-truncate source is gone; giving up", "block", b.String(), "file", pathOf(b))
					delete(m.recovering, id)
					continue
				}
				m.log.Warn("namenode: copy-on-truncate timed out; copying again", "block", b.String(), "file", pathOf(b), "attempts", rec.attempts)
				m.sendCopies(b, rec)
			}
			continue
		}
		if !all && !(now.After(rec.deadline) && len(got) > 0) {
			continue
		}
		if len(got) == 0 && len(rec.holders) > 0 {
			continue
		}
		length := rec.newLen
		if !rec.truncate {
			// Every byte acknowledged to the writer is on every node of
			// its pipeline, so the shortest replica still holds them all.
			length = -1
			for _, r := range got {
				if length < 0 || r.NumBytes < length {
					length = r.NumBytes
				}
			}
			if length < 0 {
				length = 0
			}
		}
		out = append(out, RecoveryDone{Block: b, Length: length, DropLast: length == 0 && len(got) == 0, Replicas: len(got)})
		delete(m.recovering, id)
		m.log.Info("namenode: block recovery done; closing file", "block", b.String(), "file", pathOf(b), "length", length, "replicas", len(got))
	}
	return out
}
