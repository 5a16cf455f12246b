package namenode

import (
	"context"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// getDataEncryptionKey hands a client a data encryption key for
// encrypted data transfer (dfs.encrypt.data.transfer): a random nonce and
// its HMAC under the current block key, which every DataNode holding the
// NameNode's keys recomputes at the SASL handshake. As Hadoop's
// BlockManager.generateDataEncryptionKey, none (an empty response) unless
// both block tokens and encryption are on.
func (c *clientProtocol) getDataEncryptionKey(ctx context.Context, _ *hdfspb.GetDataEncryptionKeyRequestProto) (*hdfspb.GetDataEncryptionKeyResponseProto, error) {
	cfg := c.nn.cfg
	if !cfg.BlockTokens || !cfg.EncryptDataTransfer {
		return &hdfspb.GetDataEncryptionKeyResponseProto{}, nil
	}
	k, err := c.nn.tokens.MintEncryptionKey(cfg.EncryptDataTransferAlgorithm)
	if err != nil {
		return nil, err
	}
	return &hdfspb.GetDataEncryptionKeyResponseProto{DataEncryptionKey: blocktoken.EncryptionKeyProto(k)}, nil
}
