package namenode

import (
	"context"
	"net"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
)

// ClientProtocolName is the protocol HDFS clients speak to the NameNode.
const ClientProtocolName = "org.apache.hadoop.hdfs.protocol.ClientProtocol"

// clientProtocol serves ClientNamenodeProtocol over IPC.
type clientProtocol struct {
	nn *NameNode
	ns *Namesystem
}

func (c *clientProtocol) methods() map[string]ipc.Method {
	return map[string]ipc.Method{
		"getServerDefaults":        ipc.Unary(c.getServerDefaults),
		"getDataEncryptionKey":     ipc.Unary(c.getDataEncryptionKey),
		"getFsStats":               ipc.Unary(c.getFsStats),
		"getFileInfo":              ipc.Unary(c.getFileInfo),
		"getFileLinkInfo":          ipc.Unary(c.getFileLinkInfo),
		"getListing":               ipc.Unary(c.getListing),
		"mkdirs":                   ipc.Unary(c.mkdirs),
		"delete":                   ipc.Unary(c.delete),
		"rename":                   ipc.Unary(c.rename),
		"rename2":                  ipc.Unary(c.rename2),
		"setPermission":            ipc.Unary(c.setPermission),
		"setOwner":                 ipc.Unary(c.setOwner),
		"setTimes":                 ipc.Unary(c.setTimes),
		"setReplication":           ipc.Unary(c.setReplication),
		"getContentSummary":        ipc.Unary(c.getContentSummary),
		"getQuotaUsage":            ipc.Unary(c.getQuotaUsage),
		"getStoragePolicies":       ipc.Unary(c.getStoragePolicies),
		"setStoragePolicy":         ipc.Unary(c.setStoragePolicy),
		"unsetStoragePolicy":       ipc.Unary(c.unsetStoragePolicy),
		"getStoragePolicy":         ipc.Unary(c.getStoragePolicy),
		"create":                   ipc.Unary(c.create),
		"complete":                 ipc.Unary(c.complete),
		"renewLease":               ipc.Unary(c.renewLease),
		"recoverLease":             ipc.Unary(c.recoverLease),
		"getBlockLocations":        ipc.Unary(c.getBlockLocations),
		"addBlock":                 ipc.Unary(c.addBlock),
		"abandonBlock":             ipc.Unary(c.abandonBlock),
		"updateBlockForPipeline":   ipc.Unary(c.updateBlockForPipeline),
		"updatePipeline":           ipc.Unary(c.updatePipeline),
		"getAdditionalDatanode":    ipc.Unary(c.getAdditionalDatanode),
		"append":                   ipc.Unary(c.append),
		"fsync":                    ipc.Unary(c.fsync),
		"reportBadBlocks":          ipc.Unary(c.reportBadBlocks),
		"satisfyStoragePolicy":     ipc.Unary(c.satisfyStoragePolicy),
		"truncate":                 ipc.Unary(c.truncate),
		"getPreferredBlockSize":    ipc.Unary(c.getPreferredBlockSize),
		"setSafeMode":              ipc.Unary(c.setSafeMode),
		"saveNamespace":            ipc.Unary(c.saveNamespace),
		"getDatanodeReport":        ipc.Unary(c.getDatanodeReport),
		"refreshNodes":             ipc.Unary(c.refreshNodes),
		"getDatanodeStorageReport": ipc.Unary(c.getDatanodeStorageReport),
		"checkAccess":              ipc.Unary(c.checkAccess),
		"msync":                    ipc.Unary(c.msync),
		"setQuota":                 ipc.Unary(c.setQuota),
		"concat":                   ipc.Unary(c.concat),

		// Extended attributes and ACLs (ns_xattr.go, ns_acl.go).
		"setXAttr":         ipc.Unary(c.setXAttr),
		"getXAttrs":        ipc.Unary(c.getXAttrs),
		"listXAttrs":       ipc.Unary(c.listXAttrs),
		"removeXAttr":      ipc.Unary(c.removeXAttr),
		"setAcl":           ipc.Unary(c.setAcl),
		"modifyAclEntries": ipc.Unary(c.modifyAclEntries),
		"removeAclEntries": ipc.Unary(c.removeAclEntries),
		"removeDefaultAcl": ipc.Unary(c.removeDefaultAcl),
		"removeAcl":        ipc.Unary(c.removeAcl),
		"getAclStatus":     ipc.Unary(c.getAclStatus),

		// Snapshots (ns_snapshot.go).
		"allowSnapshot":                ipc.Unary(c.allowSnapshot),
		"disallowSnapshot":             ipc.Unary(c.disallowSnapshot),
		"createSnapshot":               ipc.Unary(c.createSnapshot),
		"deleteSnapshot":               ipc.Unary(c.deleteSnapshot),
		"renameSnapshot":               ipc.Unary(c.renameSnapshot),
		"getSnapshottableDirListing":   ipc.Unary(c.getSnapshottableDirListing),
		"getSnapshotDiffReport":        ipc.Unary(c.getSnapshotDiffReport),
		"getSnapshotDiffReportListing": ipc.Unary(c.getSnapshotDiffReportListing),

		// Delegation tokens (delegation.go).
		"getDelegationToken":    ipc.Unary(c.getDelegationToken),
		"renewDelegationToken":  ipc.Unary(c.renewDelegationToken),
		"cancelDelegationToken": ipc.Unary(c.cancelDelegationToken),
	}
}

// inlineMethods are the reads answered from memory under the namesystem's
// read lock alone: the IPC server may run them on the connection's reader
// (ipc.Method.Inline). Not with HA, where a read first waits for the Raft
// group to commit what it saw (withHA). A caller's first call after its
// groups expire looks them up (GroupCache), which delays only that
// connection's next requests.
var inlineMethods = []string{"getFileInfo", "getFileLinkInfo", "getListing"}

// inlineReads marks inlineMethods Inline, once every wrapper is applied.
func (n *NameNode) inlineReads(methods map[string]ipc.Method) map[string]ipc.Method {
	if n.ha != nil {
		return methods
	}
	for _, name := range inlineMethods {
		methods[name] = methods[name].Inline()
	}
	return methods
}

// permACLBit is FsPermissionExtension's ACL bit (1<<12; encryption is
// 1<<13 and erasure coding 1<<14, neither of which strata has).
const permACLBit = 1 << 12

// fileStatusFields holds an HdfsFileStatusProto and the values its
// optional fields point to, so that fileStatusProto allocates once rather
// than once a field (a fifth of a getFileInfo's allocations).
type fileStatusFields struct {
	msg                                     hdfspb.HdfsFileStatusProto
	perm                                    hdfspb.FsPermissionProto
	fileType                                hdfspb.HdfsFileStatusProto_FileType
	length, mtime, atime, blockSize, fileID uint64
	mode, replication, policy, flags        uint32
	children                                int32
	owner, group                            string
}

func fileStatusProto(st *FileStatus, withName bool) *hdfspb.HdfsFileStatusProto {
	f := &fileStatusFields{
		fileType: hdfspb.HdfsFileStatusProto_IS_FILE,
		length:   uint64(st.Length), mtime: uint64(st.Mtime), atime: uint64(st.Atime),
		blockSize: st.BlockSize, fileID: st.FileID,
		mode: uint32(st.Mode), replication: uint32(st.Replication), policy: uint32(st.StoragePolicy),
		children: int32(st.Children),
		owner:    st.Owner, group: st.Group,
	}
	if st.IsDir {
		f.fileType = hdfspb.HdfsFileStatusProto_IS_DIR
	}
	f.perm.Perm = &f.mode
	p := &f.msg
	*p = hdfspb.HdfsFileStatusProto{
		FileType:         &f.fileType,
		Path:             []byte{},
		Length:           &f.length,
		Permission:       &f.perm,
		Owner:            &f.owner,
		Group:            &f.group,
		ModificationTime: &f.mtime,
		AccessTime:       &f.atime,
		BlockReplication: &f.replication,
		Blocksize:        &f.blockSize,
		FileId:           &f.fileID,
		ChildrenNum:      &f.children,
		StoragePolicy:    &f.policy,
	}
	if withName {
		p.Path = []byte(st.Name)
	}
	if st.HasACL {
		f.flags |= uint32(hdfspb.HdfsFileStatusProto_HAS_ACL)
		// Hadoop 3 also sets FsPermissionExtension's ACL bit in the
		// permission for clients older than the flags; readers mask it off.
		f.mode |= permACLBit
	}
	if st.SnapshotEnabled {
		f.flags |= uint32(hdfspb.HdfsFileStatusProto_SNAPSHOT_ENABLED)
	}
	if f.flags != 0 {
		p.Flags = &f.flags
	}
	return p
}

func (c *clientProtocol) getServerDefaults(ctx context.Context, _ *hdfspb.GetServerDefaultsRequestProto) (*hdfspb.GetServerDefaultsResponseProto, error) {
	cfg := c.nn.cfg
	d := &hdfspb.FsServerDefaultsProto{
		BlockSize:        proto.Uint64(uint64(cfg.DefaultBlockSize)),
		BytesPerChecksum: proto.Uint32(uint32(cfg.BytesPerChecksum)),
		WritePacketSize:  proto.Uint32(64 << 10),
		Replication:      proto.Uint32(uint32(cfg.DefaultReplication)),
		FileBufferSize:   proto.Uint32(uint32(cfg.FileBufferSize)),
		ChecksumType:     hdfspb.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(),
		PolicyId:         proto.Uint32(uint32(storage.DefaultID)),
		TrashInterval:    proto.Uint64(uint64((cfg.TrashInterval + time.Minute - 1) / time.Minute)), // minutes, a sub-minute test value rounded up
	}
	d.EncryptDataTransfer = proto.Bool(cfg.EncryptDataTransfer) // datakey.go
	return &hdfspb.GetServerDefaultsResponseProto{ServerDefaults: d}, nil
}

func (c *clientProtocol) getFsStats(ctx context.Context, _ *hdfspb.GetFsStatusRequestProto) (*hdfspb.GetFsStatsResponseProto, error) {
	st := c.nn.fsStats()
	rs := c.ns.Stats()
	return &hdfspb.GetFsStatsResponseProto{
		Capacity:              proto.Uint64(uint64(st.Capacity)),
		Used:                  proto.Uint64(uint64(st.Used)),
		Remaining:             proto.Uint64(uint64(st.Remaining)),
		UnderReplicated:       proto.Uint64(uint64(rs.UnderReplicated)),
		CorruptBlocks:         proto.Uint64(uint64(rs.Corrupt)),
		MissingBlocks:         proto.Uint64(uint64(rs.Missing)),
		PendingDeletionBlocks: proto.Uint64(0),
	}, nil
}

func (c *clientProtocol) getFileInfo(ctx context.Context, req *hdfspb.GetFileInfoRequestProto) (*hdfspb.GetFileInfoResponseProto, error) {
	st, err := c.ns.FileInfo(ctx, req.GetSrc())
	if err != nil || st == nil {
		return &hdfspb.GetFileInfoResponseProto{}, err
	}
	return &hdfspb.GetFileInfoResponseProto{Fs: fileStatusProto(st, false)}, nil
}

// getFileLinkInfo is getFileInfo: strata has no symbolic links.
func (c *clientProtocol) getFileLinkInfo(ctx context.Context, req *hdfspb.GetFileLinkInfoRequestProto) (*hdfspb.GetFileLinkInfoResponseProto, error) {
	st, err := c.ns.FileInfo(ctx, req.GetSrc())
	if err != nil || st == nil {
		return &hdfspb.GetFileLinkInfoResponseProto{}, err
	}
	return &hdfspb.GetFileLinkInfoResponseProto{Fs: fileStatusProto(st, false)}, nil
}

func (c *clientProtocol) getListing(ctx context.Context, req *hdfspb.GetListingRequestProto) (*hdfspb.GetListingResponseProto, error) {
	l, err := c.ns.List(ctx, req.GetSrc(), string(req.GetStartAfter()))
	if err != nil || l == nil {
		return &hdfspb.GetListingResponseProto{}, err
	}
	dl := &hdfspb.DirectoryListingProto{RemainingEntries: proto.Uint32(uint32(l.Remaining))}
	for i := range l.Entries {
		dl.PartialListing = append(dl.PartialListing, fileStatusProto(&l.Entries[i], true))
	}
	return &hdfspb.GetListingResponseProto{DirList: dl}, nil
}

func (c *clientProtocol) mkdirs(ctx context.Context, req *hdfspb.MkdirsRequestProto) (*hdfspb.MkdirsResponseProto, error) {
	perm := createModes{masked: uint16(req.GetMasked().GetPerm() & 0o7777)}
	if u := req.GetUnmasked(); u != nil {
		perm.unmasked, perm.hasUnmasked = uint16(u.GetPerm()&0o7777), true
	}
	err := c.ns.mkdirs(ctx, req.GetSrc(), perm, req.GetCreateParent())
	return &hdfspb.MkdirsResponseProto{Result: proto.Bool(err == nil)}, err
}

// The @AtMostOnce methods (create, append, delete, rename, rename2,
// updatePipeline) run through atMostOnce: a retried call gets the first
// attempt's answer from the retry cache (retrycache.go).

// isTrue is the success of delete and the old rename, as Hadoop's
// setState(entry, ret): a false answer is not cached.
func isTrue(ok bool) bool { return ok }

// cachedTrue answers the retry of a successful delete or rename.
func cachedTrue(any) (bool, error) { return true, nil }

func (c *clientProtocol) delete(ctx context.Context, req *hdfspb.DeleteRequestProto) (*hdfspb.DeleteResponseProto, error) {
	ok, err := atMostOnce(ctx, c.ns, func(ctx context.Context) (bool, error) {
		return c.ns.Delete(ctx, req.GetSrc(), req.GetRecursive())
	}, isTrue, cachedTrue)
	return &hdfspb.DeleteResponseProto{Result: proto.Bool(ok)}, err
}

func (c *clientProtocol) rename(ctx context.Context, req *hdfspb.RenameRequestProto) (*hdfspb.RenameResponseProto, error) {
	ok, err := atMostOnce(ctx, c.ns, func(ctx context.Context) (bool, error) {
		return c.ns.Rename(ctx, req.GetSrc(), req.GetDst(), true, false)
	}, isTrue, cachedTrue)
	return &hdfspb.RenameResponseProto{Result: proto.Bool(ok)}, err
}

func (c *clientProtocol) rename2(ctx context.Context, req *hdfspb.Rename2RequestProto) (*hdfspb.Rename2ResponseProto, error) {
	_, err := atMostOnce(ctx, c.ns, func(ctx context.Context) (bool, error) {
		return c.ns.Rename(ctx, req.GetSrc(), req.GetDst(), false, req.GetOverwriteDest())
	}, nil, cachedTrue)
	return &hdfspb.Rename2ResponseProto{}, err
}

func (c *clientProtocol) setPermission(ctx context.Context, req *hdfspb.SetPermissionRequestProto) (*hdfspb.SetPermissionResponseProto, error) {
	// Clients may send the file-type bits too: keep only permission bits.
	return &hdfspb.SetPermissionResponseProto{}, c.ns.SetPermission(ctx, req.GetSrc(), uint16(req.GetPermission().GetPerm()&0o7777))
}

func (c *clientProtocol) setOwner(ctx context.Context, req *hdfspb.SetOwnerRequestProto) (*hdfspb.SetOwnerResponseProto, error) {
	return &hdfspb.SetOwnerResponseProto{}, c.ns.SetOwner(ctx, req.GetSrc(), req.GetUsername(), req.GetGroupname())
}

func (c *clientProtocol) setTimes(ctx context.Context, req *hdfspb.SetTimesRequestProto) (*hdfspb.SetTimesResponseProto, error) {
	// -1 (sent as 2^64-1) means "leave unchanged".
	return &hdfspb.SetTimesResponseProto{}, c.ns.SetTimes(ctx, req.GetSrc(), int64(req.GetMtime()), int64(req.GetAtime()))
}

func (c *clientProtocol) setReplication(ctx context.Context, req *hdfspb.SetReplicationRequestProto) (*hdfspb.SetReplicationResponseProto, error) {
	ok, err := c.ns.SetReplication(ctx, req.GetSrc(), int(req.GetReplication()))
	return &hdfspb.SetReplicationResponseProto{Result: proto.Bool(ok)}, err
}

func (c *clientProtocol) getContentSummary(ctx context.Context, req *hdfspb.GetContentSummaryRequestProto) (*hdfspb.GetContentSummaryResponseProto, error) {
	s, err := c.ns.ContentSummary(ctx, req.GetPath())
	if err != nil {
		return nil, err
	}
	qu, err := c.ns.QuotaUsage(ctx, req.GetPath())
	if err != nil {
		return nil, err
	}
	return &hdfspb.GetContentSummaryResponseProto{Summary: &hdfspb.ContentSummaryProto{
		Length: proto.Uint64(uint64(s.Length)), FileCount: proto.Uint64(uint64(s.Files)),
		DirectoryCount: proto.Uint64(uint64(s.Dirs)), Quota: proto.Uint64(uint64(qu.Quota)),
		SpaceConsumed: proto.Uint64(uint64(s.SpaceConsumed)), SpaceQuota: proto.Uint64(uint64(qu.SpaceQuota)),
		TypeQuotaInfos: typeQuotaInfos(qu),
	}}, nil
}

func (c *clientProtocol) getQuotaUsage(ctx context.Context, req *hdfspb.GetQuotaUsageRequestProto) (*hdfspb.GetQuotaUsageResponseProto, error) {
	qu, err := c.ns.QuotaUsage(ctx, req.GetPath())
	if err != nil {
		return nil, err
	}
	return &hdfspb.GetQuotaUsageResponseProto{Usage: &hdfspb.QuotaUsageProto{
		FileAndDirectoryCount: proto.Uint64(uint64(qu.Count)), Quota: proto.Uint64(uint64(qu.Quota)),
		SpaceConsumed: proto.Uint64(uint64(qu.SpaceConsumed)), SpaceQuota: proto.Uint64(uint64(qu.SpaceQuota)),
		TypeQuotaInfos: typeQuotaInfos(qu),
	}}, nil
}

func policyProto(p storage.Policy) *hdfspb.BlockStoragePolicyProto {
	types := func(ts []storage.Type) *hdfspb.StorageTypesProto {
		out := &hdfspb.StorageTypesProto{}
		for _, t := range ts {
			out.StorageTypes = append(out.StorageTypes, hdfspb.StorageTypeProto(t))
		}
		return out
	}
	return &hdfspb.BlockStoragePolicyProto{
		PolicyId: proto.Uint32(uint32(p.ID)), Name: proto.String(p.Name),
		CreationPolicy:            types(p.Types),
		CreationFallbackPolicy:    types(p.CreationFallbacks),
		ReplicationFallbackPolicy: types(p.ReplicationFallbacks),
	}
}

func (c *clientProtocol) getStoragePolicies(ctx context.Context, _ *hdfspb.GetStoragePoliciesRequestProto) (*hdfspb.GetStoragePoliciesResponseProto, error) {
	resp := &hdfspb.GetStoragePoliciesResponseProto{}
	for _, p := range storage.Policies {
		resp.Policies = append(resp.Policies, policyProto(p))
	}
	return resp, nil
}

func (c *clientProtocol) setStoragePolicy(ctx context.Context, req *hdfspb.SetStoragePolicyRequestProto) (*hdfspb.SetStoragePolicyResponseProto, error) {
	if req.GetPolicyName() == "" {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "Storage policy name must not be empty")
	}
	return &hdfspb.SetStoragePolicyResponseProto{}, c.ns.SetStoragePolicy(ctx, req.GetSrc(), req.GetPolicyName())
}

func (c *clientProtocol) unsetStoragePolicy(ctx context.Context, req *hdfspb.UnsetStoragePolicyRequestProto) (*hdfspb.UnsetStoragePolicyResponseProto, error) {
	return &hdfspb.UnsetStoragePolicyResponseProto{}, c.ns.SetStoragePolicy(ctx, req.GetSrc(), "")
}

func (c *clientProtocol) getStoragePolicy(ctx context.Context, req *hdfspb.GetStoragePolicyRequestProto) (*hdfspb.GetStoragePolicyResponseProto, error) {
	p, err := c.ns.StoragePolicy(ctx, req.GetPath())
	if err != nil {
		return nil, err
	}
	return &hdfspb.GetStoragePolicyResponseProto{StoragePolicy: policyProto(p)}, nil
}

func clientMachine(ctx context.Context) string {
	if c, ok := ipc.CallerFrom(ctx); ok && c.Remote != nil {
		if host, _, err := net.SplitHostPort(c.Remote.String()); err == nil {
			return host
		}
	}
	return ""
}

const (
	createFlagCreate    = 1
	createFlagOverwrite = 2
	createFlagAppend    = 4
)

func (c *clientProtocol) create(ctx context.Context, req *hdfspb.CreateRequestProto) (*hdfspb.CreateResponseProto, error) {
	flags := req.GetCreateFlag()
	if flags&createFlagAppend != 0 {
		return nil, ipc.Errorf(ipc.ClassUnsupportedOperation, "create with APPEND is not supported yet: %s", req.GetSrc())
	}
	opts := CreateOptions{
		Perm:          uint16(req.GetMasked().GetPerm() & 0o7777),
		Unmasked:      uint16(req.GetUnmasked().GetPerm() & 0o7777),
		HasUnmasked:   req.GetUnmasked() != nil,
		ClientName:    req.GetClientName(),
		ClientMachine: clientMachine(ctx),
		Overwrite:     flags&createFlagOverwrite != 0,
		CreateParent:  req.GetCreateParent(),
		Replication:   int(req.GetReplication()),
		BlockSize:     int64(req.GetBlockSize()),
		StoragePolicy: req.GetStoragePolicy(),
	}
	st, err := atMostOnce(ctx, c.ns, func(ctx context.Context) (*FileStatus, error) {
		return c.ns.Create(ctx, req.GetSrc(), opts)
	}, nil, func(payload any) (*FileStatus, error) {
		if st, ok := payload.(*FileStatus); ok {
			return st, nil
		}
		return nil, retryAnswerMissing("create " + req.GetSrc())
	})
	if err != nil {
		return nil, err
	}
	return &hdfspb.CreateResponseProto{Fs: fileStatusProto(st, false)}, nil
}

func (c *clientProtocol) complete(ctx context.Context, req *hdfspb.CompleteRequestProto) (*hdfspb.CompleteResponseProto, error) {
	ok, err := c.ns.CompleteFile(ctx, req.GetSrc(), req.GetFileId(), req.GetClientName(), blockInfoPtr(req.GetLast()))
	return &hdfspb.CompleteResponseProto{Result: proto.Bool(ok)}, err
}

func (c *clientProtocol) renewLease(ctx context.Context, req *hdfspb.RenewLeaseRequestProto) (*hdfspb.RenewLeaseResponseProto, error) {
	return &hdfspb.RenewLeaseResponseProto{}, c.ns.RenewLease(ctx, req.GetClientName())
}

func (c *clientProtocol) recoverLease(ctx context.Context, req *hdfspb.RecoverLeaseRequestProto) (*hdfspb.RecoverLeaseResponseProto, error) {
	ok, err := c.ns.RecoverLease(ctx, req.GetSrc(), req.GetClientName())
	return &hdfspb.RecoverLeaseResponseProto{Result: proto.Bool(ok)}, err
}

// maxBadReplicasPerCall bounds the replicas one reportBadBlocks call may
// name (a client reports the replica it failed to read, one at a time).
const maxBadReplicasPerCall = 1024

func (c *clientProtocol) getBlockLocations(ctx context.Context, req *hdfspb.GetBlockLocationsRequestProto) (*hdfspb.GetBlockLocationsResponseProto, error) {
	if req.GetOffset() > 1<<62 {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "Negative offset or length: offset=%d length=%d", int64(req.GetOffset()), int64(req.GetLength()))
	}
	lbs, err := c.ns.BlockLocations(ctx, req.GetSrc(), int64(req.GetOffset()), int64(min(req.GetLength(), 1<<62)), clientMachine(ctx))
	if err != nil {
		return nil, err
	}
	return &hdfspb.GetBlockLocationsResponseProto{Locations: c.locatedBlocksProto(ctx, lbs)}, nil
}

func excludeSet(nodes []*hdfspb.DatanodeInfoProto) map[string]bool {
	m := map[string]bool{}
	for _, n := range nodes {
		m[n.GetId().GetDatanodeUuid()] = true
	}
	return m
}

func (c *clientProtocol) addBlock(ctx context.Context, req *hdfspb.AddBlockRequestProto) (*hdfspb.AddBlockResponseProto, error) {
	if err := c.ns.checkNodeLists(0, len(req.GetExcludeNodes())); err != nil {
		return nil, err
	}
	lb, err := c.ns.AddBlock(ctx, AddBlockRequest{
		Path: req.GetSrc(), Client: req.GetClientName(), FileID: req.GetFileId(), Previous: blockInfoPtr(req.GetPrevious()),
		Exclude: excludeSet(req.GetExcludeNodes()), ClientIP: clientMachine(ctx),
	})
	if err != nil {
		return nil, err
	}
	return &hdfspb.AddBlockResponseProto{Block: c.locatedBlockProto(ctx, lb, blocktoken.Write)}, nil
}

func (c *clientProtocol) abandonBlock(ctx context.Context, req *hdfspb.AbandonBlockRequestProto) (*hdfspb.AbandonBlockResponseProto, error) {
	return &hdfspb.AbandonBlockResponseProto{}, c.ns.AbandonBlock(ctx, req.GetSrc(), req.GetFileId(), req.GetHolder(), blockInfo(req.GetB()))
}

func (c *clientProtocol) updateBlockForPipeline(ctx context.Context, req *hdfspb.UpdateBlockForPipelineRequestProto) (*hdfspb.UpdateBlockForPipelineResponseProto, error) {
	lb, err := c.ns.UpdateBlockForPipeline(ctx, blockInfo(req.GetBlock()), req.GetClientName())
	if err != nil {
		return nil, err
	}
	return &hdfspb.UpdateBlockForPipelineResponseProto{Block: c.locatedBlockProto(ctx, lb, blocktoken.Write)}, nil
}

func (c *clientProtocol) updatePipeline(ctx context.Context, req *hdfspb.UpdatePipelineRequestProto) (*hdfspb.UpdatePipelineResponseProto, error) {
	if err := c.ns.checkNodeLists(max(len(req.GetStorageIDs()), len(req.GetNewNodes())), 0); err != nil {
		return nil, err
	}
	_, err := atMostOnce(ctx, c.ns, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.ns.UpdatePipeline(ctx, req.GetClientName(), blockInfo(req.GetOldBlock()), blockInfo(req.GetNewBlock()), req.GetStorageIDs())
	}, nil, func(any) (struct{}, error) { return struct{}{}, nil })
	return &hdfspb.UpdatePipelineResponseProto{}, err
}

func (c *clientProtocol) getAdditionalDatanode(ctx context.Context, req *hdfspb.GetAdditionalDatanodeRequestProto) (*hdfspb.GetAdditionalDatanodeResponseProto, error) {
	if err := c.ns.checkNodeLists(len(req.GetExistingStorageUuids()), len(req.GetExcludes())); err != nil {
		return nil, err
	}
	lb, err := c.ns.AdditionalDatanodes(ctx, req.GetSrc(), req.GetFileId(), blockInfo(req.GetBlk()), req.GetExistingStorageUuids(), excludeSet(req.GetExcludes()),
		int(req.GetNumAdditionalNodes()), req.GetClientName(), clientMachine(ctx))
	if err != nil {
		return nil, err
	}
	return &hdfspb.GetAdditionalDatanodeResponseProto{Block: c.locatedBlockProto(ctx, lb, blocktoken.Copy)}, nil
}

func (c *clientProtocol) append(ctx context.Context, req *hdfspb.AppendRequestProto) (*hdfspb.AppendResponseProto, error) {
	a, err := atMostOnce(ctx, c.ns, func(ctx context.Context) (*appendAnswer, error) {
		lb, st, err := c.ns.Append(ctx, req.GetSrc(), req.GetClientName(), clientMachine(ctx))
		if err != nil {
			return nil, err
		}
		return &appendAnswer{lb: lb, st: st}, nil
	}, nil, func(payload any) (*appendAnswer, error) {
		if a, ok := payload.(*appendAnswer); ok {
			return a, nil
		}
		return nil, retryAnswerMissing("append " + req.GetSrc())
	})
	if err != nil {
		return nil, err
	}
	return &hdfspb.AppendResponseProto{Block: c.locatedBlockProto(ctx, a.lb, blocktoken.Write), Stat: fileStatusProto(a.st, false)}, nil
}

func (c *clientProtocol) fsync(ctx context.Context, req *hdfspb.FsyncRequestProto) (*hdfspb.FsyncResponseProto, error) {
	return &hdfspb.FsyncResponseProto{}, c.ns.Fsync(ctx, req.GetSrc(), req.GetFileId(), req.GetClient(), req.GetLastBlockLength())
}

func (c *clientProtocol) reportBadBlocks(ctx context.Context, req *hdfspb.ReportBadBlocksRequestProto) (*hdfspb.ReportBadBlocksResponseProto, error) {
	total := 0
	for _, lb := range req.GetBlocks() {
		total += max(len(lb.GetLocs()), 1)
	}
	if total > maxBadReplicasPerCall {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "reportBadBlocks names %d replicas, more than the limit of %d", total, maxBadReplicasPerCall)
	}
	var bad []blockmgmt.BadReplica
	for _, lb := range req.GetBlocks() {
		for i, loc := range lb.GetLocs() {
			br := blockmgmt.BadReplica{BlockID: lb.GetB().GetBlockId(), GenStamp: lb.GetB().GetGenerationStamp(), DatanodeUUID: loc.GetId().GetDatanodeUuid()}
			if i < len(lb.GetStorageIDs()) {
				br.StorageID = lb.GetStorageIDs()[i]
			}
			bad = append(bad, br)
		}
	}
	return &hdfspb.ReportBadBlocksResponseProto{}, c.ns.ReportBadBlocks(ctx, bad)
}

func (c *clientProtocol) satisfyStoragePolicy(ctx context.Context, req *hdfspb.SatisfyStoragePolicyRequestProto) (*hdfspb.SatisfyStoragePolicyResponseProto, error) {
	if err := c.ns.checker(ctx).Superuser("satisfyStoragePolicy"); err != nil {
		return nil, err
	}
	return &hdfspb.SatisfyStoragePolicyResponseProto{}, c.ns.SatisfyStoragePolicy(req.GetSrc())
}

func (c *clientProtocol) getPreferredBlockSize(ctx context.Context, req *hdfspb.GetPreferredBlockSizeRequestProto) (*hdfspb.GetPreferredBlockSizeResponseProto, error) {
	st, err := c.ns.FileInfo(ctx, req.GetFilename())
	if err != nil {
		return nil, err
	}
	if st == nil || st.IsDir {
		return nil, ipc.Errorf(ipc.ClassFileNotFound, "File does not exist: %s", req.GetFilename())
	}
	return &hdfspb.GetPreferredBlockSizeResponseProto{Bsize: proto.Uint64(st.BlockSize)}, nil
}

func (c *clientProtocol) setSafeMode(ctx context.Context, req *hdfspb.SetSafeModeRequestProto) (*hdfspb.SetSafeModeResponseProto, error) {
	action := SafeModeGet
	switch req.GetAction() {
	case hdfspb.SafeModeActionProto_SAFEMODE_ENTER:
		action = SafeModeEnter
	case hdfspb.SafeModeActionProto_SAFEMODE_LEAVE, hdfspb.SafeModeActionProto_SAFEMODE_FORCE_EXIT:
		action = SafeModeLeave
	}
	on, err := c.ns.SafeMode(ctx, action)
	return &hdfspb.SetSafeModeResponseProto{Result: proto.Bool(on)}, err
}

func (c *clientProtocol) saveNamespace(ctx context.Context, req *hdfspb.SaveNamespaceRequestProto) (*hdfspb.SaveNamespaceResponseProto, error) {
	if err := c.ns.checker(ctx).Superuser("saveNamespace"); err != nil {
		return nil, err
	}
	if !c.ns.InSafeMode() {
		return nil, ipc.Errorf(ipc.ClassIOException, "Safe mode should be turned ON in order to create namespace image.")
	}
	if err := c.nn.checkpoint(); err != nil {
		return nil, err
	}
	return &hdfspb.SaveNamespaceResponseProto{Saved: proto.Bool(true)}, nil
}

// getDatanodeReport and getDatanodeStorageReport are for the superuser,
// as Hadoop's (checkSuperuserPrivilege).
func (c *clientProtocol) getDatanodeReport(ctx context.Context, req *hdfspb.GetDatanodeReportRequestProto) (*hdfspb.GetDatanodeReportResponseProto, error) {
	if err := c.ns.checker(ctx).Superuser(""); err != nil && c.nn.cfg.Permissions {
		return nil, err
	}
	return &hdfspb.GetDatanodeReportResponseProto{Di: datanodeProtos(c.ns.DatanodeReport(reportType(req.GetType())))}, nil
}

func (c *clientProtocol) checkAccess(ctx context.Context, req *hdfspb.CheckAccessRequestProto) (*hdfspb.CheckAccessResponseProto, error) {
	return &hdfspb.CheckAccessResponseProto{}, c.ns.CheckAccess(ctx, req.GetPath(), namespace.Access(req.GetMode()))
}

func (c *clientProtocol) msync(ctx context.Context, _ *hdfspb.MsyncRequestProto) (*hdfspb.MsyncResponseProto, error) {
	return &hdfspb.MsyncResponseProto{}, nil
}

func (c *clientProtocol) getDatanodeStorageReport(ctx context.Context, req *hdfspb.GetDatanodeStorageReportRequestProto) (*hdfspb.GetDatanodeStorageReportResponseProto, error) {
	if err := c.ns.checker(ctx).Superuser(""); err != nil && c.nn.cfg.Permissions {
		return nil, err
	}
	return &hdfspb.GetDatanodeStorageReportResponseProto{DatanodeStorageReports: storageReportProtos(c.ns.DatanodeStorageReport(reportType(req.GetType())))}, nil
}

func (c *clientProtocol) truncate(ctx context.Context, req *hdfspb.TruncateRequestProto) (*hdfspb.TruncateResponseProto, error) {
	done, err := c.ns.Truncate(ctx, req.GetSrc(), int64(req.GetNewLength()), req.GetClientName())
	return &hdfspb.TruncateResponseProto{Result: proto.Bool(done)}, err
}

func storageReportProtos(rs []blockmgmt.DatanodeStorages) []*hdfspb.DatanodeStorageReportProto {
	var out []*hdfspb.DatanodeStorageReportProto
	for _, d := range rs {
		r := &hdfspb.DatanodeStorageReportProto{DatanodeInfo: datanodeProto(d.Node)}
		for _, st := range d.Storages {
			r.StorageReports = append(r.StorageReports, &hdfspb.StorageReportProto{
				StorageUuid: proto.String(st.StorageID), Failed: proto.Bool(st.Failed),
				Capacity: proto.Uint64(uint64(st.Capacity)), DfsUsed: proto.Uint64(uint64(st.Used)),
				Remaining: proto.Uint64(uint64(st.Remaining)), BlockPoolUsed: proto.Uint64(uint64(st.Used)),
				Storage: &hdfspb.DatanodeStorageProto{StorageUuid: proto.String(st.StorageID), StorageType: hdfspb.StorageTypeProto(st.Type).Enum()},
			})
		}
		out = append(out, r)
	}
	return out
}
