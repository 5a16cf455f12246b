package fsdataset

import (
	"errors"
	"fmt"

	"github.com/stratafs/strata/internal/storage"
)

// Block identifies a block replica as HDFS does: its ID, its generation
// stamp and its length in bytes.
type Block struct {
	ID       uint64
	GenStamp uint64
	NumBytes int64
}

// String names the block as Hadoop does: blk_<id>_<genstamp>.
func (b Block) String() string { return fmt.Sprintf("blk_%d_%d", b.ID, b.GenStamp) }

// ReplicaState is the state of a replica, numbered as Hadoop's
// ReplicaState (and ReplicaStateProto).
type ReplicaState int

// Replica states.
const (
	// Finalized: complete, durable, immutable (until an append).
	Finalized ReplicaState = 0
	// RBW (replica being written): a writer has it open, or had it open
	// in this process and closed it without finalizing.
	RBW ReplicaState = 1
	// RWR (replica waiting to be recovered): an RBW replica found at
	// start-up. Its length is the longest prefix whose checksums verify.
	RWR ReplicaState = 2
)

func (s ReplicaState) String() string {
	switch s {
	case Finalized:
		return "FINALIZED"
	case RBW:
		return "RBW"
	case RWR:
		return "RWR"
	}
	return fmt.Sprintf("ReplicaState(%d)", int(s))
}

// ReplicaInfo describes a replica. For an RBW replica NumBytes is its
// visible length (the bytes flushed so far).
type ReplicaInfo struct {
	Block
	State       ReplicaState
	StorageID   string
	StorageType storage.Type
}

// VolumeInfo describes a volume for heartbeats and storage reports.
type VolumeInfo struct {
	StorageID string
	Type      storage.Type
	Path      string
	// Capacity is the file system's size minus Config.Reserved, in bytes.
	Capacity int64
	// DfsUsed is the bytes of the replicas (data and meta files) on the
	// volume, as the dataset accounts them.
	DfsUsed int64
	// Remaining is the file system's free bytes minus Config.Reserved,
	// never below 0.
	Remaining int64
	// Failed is set once the volume is out of service; the byte counts
	// are then 0.
	Failed    bool
	NumBlocks int
}

// EventKind says what happened to a replica, numbered as Hadoop's
// ReceivedDeletedBlockInfo.BlockStatus used in incremental block reports.
type EventKind int

// Event kinds.
const (
	// Receiving: a replica being written was created or reopened
	// (CreateRBW, Append, RecoverRBW). Info.NumBytes is its length then.
	Receiving EventKind = 1
	// Received: a replica was finalized, or a finalized replica's
	// generation stamp changed (UpdateFinalizedGenStamp).
	Received EventKind = 2
	// Deleted: a replica is gone (Delete, an aborted write, or its
	// volume failed).
	Deleted EventKind = 3
)

func (k EventKind) String() string {
	switch k {
	case Receiving:
		return "RECEIVING_BLOCK"
	case Received:
		return "RECEIVED_BLOCK"
	case Deleted:
		return "DELETED_BLOCK"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// ReplicaEvent is delivered to Config.OnChange for incremental block
// reports.
type ReplicaEvent struct {
	Kind EventKind
	Info ReplicaInfo
}

// Sentinel errors. The errors the package returns wrap them (errors.Is) and
// name the block (blk_<id>_<gs>) or the volume involved.
var (
	// ErrReplicaNotFound: no replica of the block, or not in a state the
	// operation accepts.
	ErrReplicaNotFound = errors.New("fsdataset: replica not found")
	// ErrReplicaExists: CreateRBW for a block ID that already has a replica.
	ErrReplicaExists = errors.New("fsdataset: replica already exists")
	// ErrNoVolume: no volume of the wanted storage type (or ID) with room.
	ErrNoVolume = errors.New("fsdataset: no volume available")
	// ErrGenStamp: the replica's generation stamp does not fit the request.
	ErrGenStamp = errors.New("fsdataset: generation stamp mismatch")
	// ErrState: the replica is in the wrong state for the operation (e.g.
	// Append on a replica being written).
	ErrState = errors.New("fsdataset: replica in wrong state")
	// ErrLength: the replica's length does not fit the request.
	ErrLength = errors.New("fsdataset: replica length mismatch")
	// ErrCorrupt: stored checksums do not match the data (see
	// CorruptReplicaError), or a meta file is damaged.
	ErrCorrupt = errors.New("fsdataset: corrupt replica")
	// ErrWriterClosed: the ReplicaWriter was finalized, aborted, closed,
	// or stopped by a recovery, a delete or Dataset.Close.
	ErrWriterClosed = errors.New("fsdataset: replica writer is closed")
	// ErrVolumeFailed: the replica's volume is out of service.
	ErrVolumeFailed = errors.New("fsdataset: volume failed")
	// ErrInUse: another process (or another Open) holds a volume's lock.
	ErrInUse = errors.New("fsdataset: volume is in use")
	// ErrDatanodeUUID: a volume belongs to another DataNode.
	ErrDatanodeUUID = errors.New("fsdataset: volume belongs to another datanode")
	// ErrTooManyFailed: more volumes failed than tolerated; the DataNode
	// must stop.
	ErrTooManyFailed = errors.New("fsdataset: too many failed volumes")
	// ErrClosed: the Dataset was closed.
	ErrClosed = errors.New("fsdataset: dataset is closed")
)

// msgError is an error with its own message that wraps a sentinel.
type msgError struct {
	msg string
	err error
}

func (e *msgError) Error() string { return e.msg }
func (e *msgError) Unwrap() error { return e.err }

func errorf(sentinel error, format string, args ...any) error {
	return &msgError{"fsdataset: " + fmt.Sprintf(format, args...), sentinel}
}

// CorruptReplicaError reports a replica whose data does not match its
// stored checksums. It wraps ErrCorrupt.
type CorruptReplicaError struct {
	Block     Block
	StorageID string
	// Offset is where the first bad chunk starts, in bytes from the
	// start of the block (a multiple of the bytes per checksum).
	Offset int64
	// Reason describes the damage when it is not a checksum mismatch
	// (e.g. a meta file of the wrong length); empty otherwise.
	Reason string
}

func (e *CorruptReplicaError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("fsdataset: corrupt replica %v on %s: %s", e.Block, e.StorageID, e.Reason)
	}
	return fmt.Sprintf("fsdataset: corrupt replica %v on %s: checksum mismatch in the chunk at offset %d", e.Block, e.StorageID, e.Offset)
}

func (e *CorruptReplicaError) Unwrap() error { return ErrCorrupt }
