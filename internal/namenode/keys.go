package namenode

import (
	"sync"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/proto/dnpb"
)

// Block keys and DataNodes. The NameNode's blocktoken master makes a new
// key every dfs.block.access.key.update.interval (rollBlockKeys, from the
// monitor, on the Namesystem's clock). A DataNode gets every key that
// may still verify a token in its RegisterResponse and, after each roll,
// in its next HeartbeatResponse: keyExports counts rolls and remembers,
// per DataNode, the roll whose keys it was last sent. Keys are exported
// whether or not block tokens are enabled (BlockKeys.enabled tells the
// DataNode whether to check block tokens): WebHDFS redirects are signed
// with them either way.

// keyExports tracks which DataNodes have the current keys. Its mutex is
// a leaf: nothing else is locked while it is held.
type keyExports struct {
	mu   sync.Mutex
	gen  uint64            // rolls since start
	sent map[string]uint64 // DataNode uuid → gen of the keys it was sent
}

// rollBlockKeys rolls the block key when its interval has passed.
func (n *NameNode) rollBlockKeys() {
	rolled, err := n.tokens.Tick()
	if err != nil {
		n.log.Error("namenode: rolling the block key", "err", err)
		return
	}
	if rolled {
		n.keys.mu.Lock()
		n.keys.gen++
		n.keys.mu.Unlock()
		n.log.Info("namenode: block key rolled", "current", n.tokens.ExportKeys().Current.ID)
	}
}

// blockKeysFor returns the keys for DataNode uuid when it does not have
// the current ones yet (always when registering), and records them as
// sent; nil when it is up to date.
func (n *NameNode) blockKeysFor(uuid string, registering bool) *dnpb.BlockKeys {
	n.keys.mu.Lock()
	if n.keys.sent == nil {
		n.keys.sent = map[string]uint64{}
	}
	gen, ok := n.keys.sent[uuid]
	if ok && gen == n.keys.gen && !registering {
		n.keys.mu.Unlock()
		return nil
	}
	n.keys.sent[uuid] = n.keys.gen
	n.keys.mu.Unlock()
	return blocktoken.KeysProto(n.tokens.ExportKeys())
}

// BlockTokens is the NameNode's block token manager, for in-process
// callers and tests.
func (n *NameNode) BlockTokens() *blocktoken.Manager { return n.tokens }
