package blockmgmt

import "github.com/stratafs/strata/internal/storage"

// CommandKind says what a Command asks a DataNode to do.
type CommandKind uint8

const (
	// Reregister: the NameNode does not know the node (or declared it
	// dead); it must register again and send a full block report.
	Reregister CommandKind = iota + 1
	// Transfer: copy Block to Targets.
	Transfer
	// Move: move the local replica of Block to a volume of TargetType.
	Move
	// Invalidate: delete the replicas in Blocks.
	Invalidate
	// Recover: finish the replica of Block (at its old generation stamp)
	// with NewGenStamp, cut to NewLength (-1: keep what it holds).
	Recover
)

// maxInvalidatePerCommand bounds the replicas one Invalidate names.
const maxInvalidatePerCommand = 1000

// BlockRef names a replica in a command. NumBytes is set for Transfer and
// Move only.
type BlockRef struct {
	ID, GenStamp uint64
	NumBytes     int64
}

// Target is one destination of a Transfer.
type Target struct {
	Node        DatanodeInfo
	StorageType storage.Type
	StorageID   string
}

// Command is work for a DataNode, queued until its next heartbeat or block
// report answer.
type Command struct {
	Kind        CommandKind
	Block       BlockRef     // Transfer, Move, Recover
	Targets     []Target     // Transfer
	TargetType  storage.Type // Move
	Blocks      []BlockRef   // Invalidate
	NewGenStamp uint64       // Recover
	NewLength   int64        // Recover
	NewBlockID  uint64       // Recover: copy-on-truncate into this block
}

// queue adds c to d's commands; a standby sends none.
func (m *Manager) queue(d *Datanode, c Command) {
	if m.standby {
		return
	}
	d.commands = append(d.commands, c)
}

// takeCommands returns and clears d's queued commands.
func takeCommands(d *Datanode) []Command {
	cmds := d.commands
	d.commands = nil
	return cmds
}
