package namenode

// haNode is this NameNode's membership in its nameservice's Raft group.
type haNode struct {
	state HAState
}

func (h *haNode) serviceState() HAState { return h.state }
