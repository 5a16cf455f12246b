package quorum

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Member is one NameNode of the group: its NameNode id and RPC address,
// which is also its Raft address.
type Member struct {
	ID   string
	Addr string
}

// Config configures a member.
type Config struct {
	ID      string   // this member's id
	Members []Member // the initial group (Bootstrap) and the Raft peers allowed to connect
	Dir     string   // <name dir>/raft

	// Raft timing (hashicorp/raft's meanings): a follower that hears
	// nothing from a leader for HeartbeatTimeout starts an election; a
	// leader that cannot reach a quorum for LeaderLeaseTimeout steps down.
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	CommitTimeout      time.Duration
	// MaxAppendEntries bounds the entries written and sent in one batch
	// (the group commit size).
	MaxAppendEntries int
	// A snapshot is taken when SnapshotThreshold entries are past the last
	// one, checked every SnapshotInterval; TrailingLogs entries are kept
	// after it for followers that lag a little.
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64

	Logger *slog.Logger
}

func (c Config) raftConfig(notify chan<- bool) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(c.ID)
	setDur := func(dst *time.Duration, v time.Duration) {
		if v > 0 {
			*dst = v
		}
	}
	setDur(&rc.HeartbeatTimeout, c.HeartbeatTimeout)
	setDur(&rc.ElectionTimeout, c.ElectionTimeout)
	setDur(&rc.LeaderLeaseTimeout, c.LeaderLeaseTimeout)
	setDur(&rc.CommitTimeout, c.CommitTimeout)
	setDur(&rc.SnapshotInterval, c.SnapshotInterval)
	if c.MaxAppendEntries > 0 {
		rc.MaxAppendEntries = c.MaxAppendEntries
	}
	if c.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = c.SnapshotThreshold
	}
	if c.TrailingLogs > 0 {
		rc.TrailingLogs = c.TrailingLogs
	}
	// Proposals queue while the leader writes the previous batch, so
	// that batches grow with load (group commit).
	rc.BatchApplyCh = true
	rc.NotifyCh = notify
	rc.Logger = newHCLogger(c.Logger)
	rc.NoLegacyTelemetry = true
	return rc
}

// Validate checks c.
func (c Config) Validate() error {
	switch {
	case c.ID == "":
		return errors.New("quorum: no member id")
	case c.Dir == "":
		return errors.New("quorum: no storage directory")
	case len(c.Members) == 0:
		return errors.New("quorum: no members")
	}
	for _, m := range c.Members {
		if m.ID == c.ID {
			return nil
		}
	}
	return fmt.Errorf("quorum: member %s is not in the group", c.ID)
}

func (c Config) configuration() raft.Configuration {
	var rc raft.Configuration
	for _, m := range c.Members {
		rc.Servers = append(rc.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(m.ID), Address: raft.ServerAddress(m.Addr)})
	}
	return rc
}

// Node is a running member.
type Node struct {
	Raft  *raft.Raft
	cfg   Config
	store *LogStore
	snaps *raft.FileSnapshotStore
	trans *raft.NetworkTransport
}

type stores struct {
	store *LogStore
	snaps *raft.FileSnapshotStore
}

func openStores(cfg Config) (stores, error) {
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return stores{}, err
	}
	bs, err := OpenLogStore(filepath.Join(cfg.Dir, "log"))
	if err != nil {
		return stores{}, fmt.Errorf("quorum: opening the Raft log: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, newHCLogger(cfg.Logger))
	if err != nil {
		bs.Close()
		return stores{}, fmt.Errorf("quorum: opening the snapshot store: %w", err)
	}
	return stores{bs, snaps}, nil
}

// Bootstrap writes the group's first configuration (all of cfg.Members)
// into cfg.Dir: `namenode -format` on the first member. The others start
// with empty storage (`-bootstrapStandby`) and learn everything from the
// leader.
func Bootstrap(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	st, err := openStores(cfg)
	if err != nil {
		return err
	}
	defer st.store.Close()
	_, trans := raft.NewInmemTransport(raft.ServerAddress(cfg.ID))
	return raft.BootstrapCluster(cfg.raftConfig(nil), st.store, st.store, st.snaps, trans, cfg.configuration())
}

// HasState reports whether dir holds Raft state (a bootstrapped or joined
// member).
func HasState(cfg Config) (bool, error) {
	st, err := openStores(cfg)
	if err != nil {
		return false, err
	}
	defer st.store.Close()
	return raft.HasExistingState(st.store, st.store, st.snaps)
}

// Open starts the member: fsm receives the committed entries, stream
// carries Raft's traffic (Mux.Raft), notify gets true on becoming leader
// and false on losing it.
func Open(cfg Config, fsm raft.FSM, stream raft.StreamLayer, notify chan<- bool) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st, err := openStores(cfg)
	if err != nil {
		return nil, err
	}
	trans := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: stream, MaxPool: 4, Timeout: 10 * time.Second, Logger: newHCLogger(cfg.Logger),
	})
	r, err := raft.NewRaft(cfg.raftConfig(notify), fsm, st.store, st.store, st.snaps, trans)
	if err != nil {
		trans.Close()
		st.store.Close()
		return nil, fmt.Errorf("quorum: starting Raft: %w", err)
	}
	return &Node{Raft: r, cfg: cfg, store: st.store, snaps: st.snaps, trans: trans}, nil
}

// Close stops the member and closes its storage.
func (n *Node) Close() error {
	err := n.Raft.Shutdown().Error()
	n.trans.Close()
	return errors.Join(err, n.store.Close())
}

// LatestSnapshot opens the newest snapshot; ok is false when there is none.
func (n *Node) LatestSnapshot() (meta *raft.SnapshotMeta, r io.ReadCloser, ok bool, err error) {
	list, err := n.snaps.List()
	if err != nil || len(list) == 0 {
		return nil, nil, false, err
	}
	meta, r, err = n.snaps.Open(list[0].ID)
	if err != nil {
		return nil, nil, false, err
	}
	return meta, r, true, nil
}

// Entries calls fn for each command entry from index from to to
// (inclusive) in the local log.
func (n *Node) Entries(from, to uint64, fn func(*raft.Log) error) error {
	var l raft.Log
	for i := from; i <= to; i++ {
		if err := n.store.GetLog(i, &l); err != nil {
			return fmt.Errorf("quorum: log entry %d: %w", i, err)
		}
		if l.Type != raft.LogCommand {
			continue
		}
		if err := fn(&l); err != nil {
			return err
		}
	}
	return nil
}

// WaitLeader waits until the group has a leader (any member) or ctx ends.
func (n *Node) WaitLeader(ctx context.Context) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if addr, _ := n.Raft.LeaderWithID(); addr != "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Entry is what one Raft command entry carries: one edit log record.
type Entry struct {
	Epoch  uint64 // the proposing process's random epoch
	TxID   uint64 // the transaction id the proposer gave the edit
	Record []byte // the edit (namespace.Edit's encoding)
}

const entryVersion = 1

// MaxRecord bounds a decoded record (an edit is a few hundred bytes; a
// replication of block lists may be larger).
const MaxRecord = 64 << 20

// AppendEntry encodes e after buf: version byte, epoch (8 bytes, big
// endian), txid (uvarint), record.
func AppendEntry(buf []byte, e Entry) []byte {
	buf = append(buf, entryVersion)
	buf = binary.BigEndian.AppendUint64(buf, e.Epoch)
	buf = binary.AppendUvarint(buf, e.TxID)
	return append(buf, e.Record...)
}

// DecodeEntry decodes an AppendEntry encoding; Record aliases data.
func DecodeEntry(data []byte) (Entry, error) {
	if len(data) < 10 || data[0] != entryVersion {
		return Entry{}, errors.New("quorum: malformed entry")
	}
	e := Entry{Epoch: binary.BigEndian.Uint64(data[1:9])}
	tx, n := binary.Uvarint(data[9:])
	if n <= 0 || tx == 0 {
		return Entry{}, errors.New("quorum: malformed entry txid")
	}
	e.TxID = tx
	e.Record = data[9+n:]
	if len(e.Record) > MaxRecord {
		return Entry{}, errors.New("quorum: entry record too large")
	}
	return e, nil
}

// hcLogger adapts hashicorp's logger interface to slog through its
// writer option: Raft's own lines, at warn and above, reach the
// NameNode's log prefixed with "raft:".
func newHCLogger(l *slog.Logger) hclog.Logger {
	if l == nil {
		l = slog.Default()
	}
	return hclog.New(&hclog.LoggerOptions{
		Name: "raft", Level: hclog.Warn, Output: slogWriter{l}, DisableTime: true,
	})
}

type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	lvl := slog.LevelWarn
	if strings.Contains(line, "[ERROR]") {
		lvl = slog.LevelError
	}
	w.l.Log(context.Background(), lvl, line)
	return len(p), nil
}
