package namenode

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/webhdfs"
)

// The NameNode's half of WebHDFS (package webhdfs has the protocol):
// metadata operations run on the Namesystem as the request's user.name,
// so HDFS permissions apply exactly as over RPC; OPEN, CREATE, APPEND and
// GETFILECHECKSUM are redirected to a DataNode's HTTP port.

type webOp func(n *NameNode, ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error

// webOps are the operations by "METHOD OP".
var webOps = map[string]webOp{
	"GET GETFILESTATUS":       (*NameNode).webFileStatus,
	"GET LISTSTATUS":          (*NameNode).webListStatus,
	"GET LISTSTATUS_BATCH":    (*NameNode).webListStatusBatch,
	"GET GETCONTENTSUMMARY":   (*NameNode).webContentSummary,
	"GET GETHOMEDIRECTORY":    (*NameNode).webHomeDirectory,
	"GET GETSTORAGEPOLICY":    (*NameNode).webStoragePolicy,
	"GET GETALLSTORAGEPOLICY": (*NameNode).webAllStoragePolicies,
	"GET OPEN":                (*NameNode).webRedirectToReplica,
	"GET GETFILECHECKSUM":     (*NameNode).webRedirectToReplica,
	"POST APPEND":             (*NameNode).webRedirectToReplica,
	"PUT CREATE":              (*NameNode).webCreate,
	"PUT MKDIRS":              (*NameNode).webMkdirs,
	"PUT RENAME":              (*NameNode).webRename,
	"PUT SETPERMISSION":       (*NameNode).webSetPermission,
	"PUT SETOWNER":            (*NameNode).webSetOwner,
	"PUT SETREPLICATION":      (*NameNode).webSetReplication,
	"PUT SETTIMES":            (*NameNode).webSetTimes,
	"PUT SETSTORAGEPOLICY":    (*NameNode).webSetStoragePolicy,
	"POST UNSETSTORAGEPOLICY": (*NameNode).webUnsetStoragePolicy,
	"DELETE DELETE":           (*NameNode).webDelete,

	// Extended attributes and ACLs (ns_xattr.go, ns_acl.go).
	"GET GETXATTRS":        (*NameNode).webGetXAttrs,
	"GET LISTXATTRS":       (*NameNode).webListXAttrs,
	"PUT SETXATTR":         (*NameNode).webSetXAttr,
	"PUT REMOVEXATTR":      (*NameNode).webRemoveXAttr,
	"GET GETACLSTATUS":     (*NameNode).webGetACLStatus,
	"PUT SETACL":           (*NameNode).webSetACL,
	"PUT MODIFYACLENTRIES": (*NameNode).webModifyACLEntries,
	"PUT REMOVEACLENTRIES": (*NameNode).webRemoveACLEntries,
	"PUT REMOVEDEFAULTACL": (*NameNode).webRemoveDefaultACL,
	"PUT REMOVEACL":        (*NameNode).webRemoveACL,

	// Delegation tokens (delegation.go).
	"GET GETDELEGATIONTOKEN":    (*NameNode).webGetDelegationToken,
	"PUT RENEWDELEGATIONTOKEN":  (*NameNode).webRenewDelegationToken,
	"PUT CANCELDELEGATIONTOKEN": (*NameNode).webCancelDelegationToken,
}

// webhdfs serves /webhdfs/v1/, running each operation as the request's
// user.
func (n *NameNode) webhdfs() http.Handler {
	ops := map[string]webhdfs.Op{}
	for key, op := range webOps {
		ops[key] = func(w http.ResponseWriter, hr *http.Request, r *webhdfs.Request) error {
			caller := &ipc.Caller{User: r.User, Protocol: "webhdfs"}
			if ap, err := netip.ParseAddrPort(hr.RemoteAddr); err == nil {
				caller.Remote = net.TCPAddrFromAddrPort(ap)
			}
			if n.ServiceState() != HAActive {
				// Clients (and DataNodes' redirects) try the next member.
				return standbyError("READ")
			}
			if err := n.webAuthenticate(hr.Context(), caller, r); err != nil {
				return err
			}
			return op(n, ipc.WithCaller(hr.Context(), caller), w, r)
		}
	}
	return webhdfs.Handler(ops)
}

func webStatus(st *FileStatus) webhdfs.FileStatus {
	typ := "FILE"
	if st.IsDir {
		typ = "DIRECTORY"
	}
	return webhdfs.FileStatus{
		AccessTime: st.Atime, BlockSize: int64(st.BlockSize), ChildrenNum: max(st.Children, 0), FileID: st.FileID,
		Group: st.Group, Length: st.Length, ModificationTime: st.Mtime, Owner: st.Owner, PathSuffix: st.Name,
		Permission: strconv.FormatUint(uint64(st.Mode&0o1777), 8), Replication: int(st.Replication),
		StoragePolicy: int(st.StoragePolicy), Type: typ, AclBit: st.HasACL,
	}
}

func (n *NameNode) webFileStatus(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	st, err := n.ns.FileInfo(ctx, r.Path)
	if err != nil {
		return err
	}
	if st == nil {
		return notFound(r.Path)
	}
	ws := webStatus(st)
	ws.PathSuffix = ""
	webhdfs.WriteJSON(w, http.StatusOK, map[string]webhdfs.FileStatus{"FileStatus": ws})
	return nil
}

// listPage returns one getListing page of r.Path after startAfter.
func (n *NameNode) listPage(ctx context.Context, p, startAfter string) ([]webhdfs.FileStatus, int, error) {
	l, err := n.ns.List(ctx, p, startAfter)
	if err != nil {
		return nil, 0, err
	}
	if l == nil {
		return nil, 0, notFound(p)
	}
	out := make([]webhdfs.FileStatus, len(l.Entries))
	for i := range l.Entries {
		out[i] = webStatus(&l.Entries[i])
	}
	return out, l.Remaining, nil
}

// webListStatus streams the whole listing, one getListing page at a
// time, as Hadoop does, so a large directory is never held whole. Only
// the first page's errors can still be answered as a RemoteException; a
// later one cuts the response short.
func (n *NameNode) webListStatus(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	page, remaining, err := n.listPage(ctx, r.Path, "")
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	dw := &deadlineWriter{w: w, rc: http.NewResponseController(w)}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	buf.WriteString(`{"FileStatuses":{"FileStatus":[`)
	for first := true; ; {
		for i := range page {
			if !first {
				buf.WriteByte(',')
			}
			first = false
			enc.Encode(&page[i])
			buf.Truncate(buf.Len() - 1) // Encode's newline
		}
		if _, err := dw.Write(buf.Bytes()); err != nil {
			return nil // the client went away
		}
		buf.Reset()
		if remaining == 0 || len(page) == 0 {
			break
		}
		if page, remaining, err = n.listPage(ctx, r.Path, page[len(page)-1].PathSuffix); err != nil {
			n.log.Warn("webhdfs: LISTSTATUS failed mid-stream", "path", r.Path, "err", err)
			panic(http.ErrAbortHandler)
		}
	}
	io.WriteString(dw, "]}}")
	return nil
}

func (n *NameNode) webListStatusBatch(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	page, remaining, err := n.listPage(ctx, r.Path, r.String("startafter"))
	if err != nil {
		return err
	}
	var l webhdfs.DirectoryListing
	l.PartialListing.FileStatuses.FileStatus = append([]webhdfs.FileStatus{}, page...)
	l.RemainingEntries = remaining
	webhdfs.WriteJSON(w, http.StatusOK, map[string]webhdfs.DirectoryListing{"DirectoryListing": l})
	return nil
}

func (n *NameNode) webContentSummary(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	s, err := n.ns.ContentSummary(ctx, r.Path)
	if err != nil {
		return err
	}
	qu, err := n.ns.QuotaUsage(ctx, r.Path)
	if err != nil {
		return err
	}
	webhdfs.WriteJSON(w, http.StatusOK, map[string]webhdfs.ContentSummary{"ContentSummary": {
		DirectoryCount: s.Dirs, FileCount: s.Files, Length: s.Length, SpaceConsumed: s.SpaceConsumed,
		Quota: qu.Quota, SpaceQuota: qu.SpaceQuota,
	}})
	return nil
}

func (n *NameNode) webHomeDirectory(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	webhdfs.WriteJSON(w, http.StatusOK, map[string]string{"Path": "/user/" + r.User})
	return nil
}

func webPolicy(p storage.Policy) webhdfs.BlockStoragePolicy {
	names := func(ts []storage.Type) []string {
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = t.String()
		}
		return out
	}
	return webhdfs.BlockStoragePolicy{
		CopyOnCreateFile: p.CopyOnCreateFile, CreationFallbacks: names(p.CreationFallbacks), ID: int(p.ID),
		Name: p.Name, ReplicationFallbacks: names(p.ReplicationFallbacks), StorageTypes: names(p.Types),
	}
}

func (n *NameNode) webStoragePolicy(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	p, err := n.ns.StoragePolicy(ctx, r.Path)
	if err != nil {
		return err
	}
	webhdfs.WriteJSON(w, http.StatusOK, map[string]webhdfs.BlockStoragePolicy{"BlockStoragePolicy": webPolicy(p)})
	return nil
}

func (n *NameNode) webAllStoragePolicies(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	var all []webhdfs.BlockStoragePolicy
	for _, p := range storage.Policies {
		all = append(all, webPolicy(p))
	}
	webhdfs.WriteJSON(w, http.StatusOK, map[string]map[string][]webhdfs.BlockStoragePolicy{"BlockStoragePolicies": {"BlockStoragePolicy": all}})
	return nil
}

// webRedirectToReplica redirects OPEN, GETFILECHECKSUM and APPEND to a
// DataNode holding the data they need: the block at offset for OPEN, the
// last block otherwise, as Hadoop chooses; any live DataNode for an empty
// file.
func (n *NameNode) webRedirectToReplica(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	st, err := n.ns.FileInfo(ctx, r.Path)
	if err != nil {
		return err
	}
	if st == nil {
		return ipc.Errorf(ipc.ClassFileNotFound, "File %s not found.", r.Path)
	}
	if st.IsDir {
		return ipc.Errorf(ipc.ClassFileNotFound, "Path is not a file: %s", r.Path)
	}
	offset := st.Length - 1
	if r.Op == "OPEN" {
		if offset, err = r.Int("offset", 0, 0, 1<<62); err != nil {
			return err
		}
		if _, err := r.Int("length", 0, 0, 1<<62); err != nil {
			return err
		}
		if offset >= st.Length && st.Length > 0 {
			return ipc.Errorf(ipc.ClassIOException, "Offset=%d out of the range [0, %d); OPEN, path=%s", offset, st.Length, r.Path)
		}
	}
	var dn *hdfspb.DatanodeInfoProto
	if st.Length > 0 {
		lbs, err := n.ns.BlockLocations(ctx, r.Path, offset, 1, clientMachine(ctx))
		if err != nil {
			return err
		}
		if len(lbs.Blocks) > 0 {
			var locs []blockmgmt.DatanodeInfo
			for _, t := range lbs.Blocks[0].Locs {
				locs = append(locs, t.Node)
			}
			dn = firstServingHTTP(datanodeProtos(locs))
		}
	}
	if dn == nil {
		dn = leastBusy(datanodeProtos(n.ns.DatanodeReport(blockmgmt.ReportLive)))
	}
	return n.webRedirect(ctx, w, r, dn)
}

// firstServingHTTP returns the first of a block's replicas (sorted for
// the reader, nearest first) whose DataNode serves HTTP, or nil.
func firstServingHTTP(nodes []*hdfspb.DatanodeInfoProto) *hdfspb.DatanodeInfoProto {
	for _, d := range nodes {
		if d.GetId().GetInfoPort() != 0 {
			return d
		}
	}
	return nil
}

// leastBusy returns the node serving HTTP with the fewest active
// transfers, picking at random among equally busy ones; nil when none
// serves HTTP.
func leastBusy(nodes []*hdfspb.DatanodeInfoProto) *hdfspb.DatanodeInfoProto {
	var best *hdfspb.DatanodeInfoProto
	ties := 0
	for _, d := range nodes {
		if d.GetId().GetInfoPort() == 0 {
			continue
		}
		switch {
		case best == nil || d.GetXceiverCount() < best.GetXceiverCount():
			best, ties = d, 1
		case d.GetXceiverCount() == best.GetXceiverCount():
			// Spread equally busy nodes' load: reservoir-pick among ties.
			ties++
			if rand.IntN(ties) == 0 {
				best = d
			}
		}
	}
	return best
}

// redirectModes are the block token modes of the redirected operations.
var redirectModes = map[string]blocktoken.AccessMode{
	"OPEN": blocktoken.Read, "GETFILECHECKSUM": blocktoken.Read,
	"CREATE": blocktoken.Write, "APPEND": blocktoken.Write,
}

// webRedirect redirects r to dn's HTTP server, signed: the URL carries a
// redirect token (blocktoken.RedirectParam) for r's user, operation and
// path, so that the DataNode serves only what the NameNode approved. In
// secure mode it also carries the delegation token the DataNode
// authenticates to the NameNode with (redirectDelegation).
func (n *NameNode) webRedirect(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request, dn *hdfspb.DatanodeInfoProto) error {
	if dn == nil {
		return ipc.Errorf(ipc.ClassIOException, "Failed to find datanode, suggest to check cluster health.")
	}
	hostPort := net.JoinHostPort(dn.GetId().GetIpAddr(), strconv.Itoa(int(dn.GetId().GetInfoPort())))
	loc, err := n.signedDataNodeURL(ctx, hostPort, r)
	if err != nil {
		return err
	}
	return webhdfs.Redirect(w, r, loc)
}

// signedDataNodeURL is webhdfs.DataNodeURL with a redirect token added,
// and in secure mode the delegation token instead of user.name.
func (n *NameNode) signedDataNodeURL(ctx context.Context, hostPort string, r *webhdfs.Request) (string, error) {
	mode, ok := redirectModes[r.Op]
	if !ok {
		return "", ipc.Errorf(ipc.ClassIOException, "%s is not redirected", r.Op)
	}
	tok, err := n.tokens.MintRedirect(r.User, r.Op, r.Path, mode)
	if err != nil {
		return "", ipc.Errorf(ipc.ClassIOException, "signing the redirect: %v", err)
	}
	u, err := url.Parse(webhdfs.DataNodeURL(hostPort, r, n.RPCAddr()))
	if err != nil {
		return "", ipc.Errorf(ipc.ClassIOException, "redirect URL: %v", err)
	}
	q := u.Query()
	q.Set(blocktoken.RedirectParam, tok)
	if n.cfg.Delegation.Security {
		dt, err := n.redirectDelegation(ctx, r)
		if err != nil {
			return "", err
		}
		// As Hadoop's redirectURI: the token names the user.
		q.Del("user.name")
		q.Del("doas")
		q.Set("delegation", dt)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// redirectDelegation is the delegation= of a secure-mode redirect, the
// only credential the DataNode has for its calls to the NameNode (it
// never acts on a name alone): the caller's own token when the request
// came with one, else one issued now to the SPNEGO-authenticated caller,
// renewable by the caller (Hadoop's redirectURI and
// generateDelegationToken). It is issued as GETDELEGATIONTOKEN issues
// one, through the edit log, so every HA member and a restarted
// NameNode know it.
func (n *NameNode) redirectDelegation(ctx context.Context, r *webhdfs.Request) (string, error) {
	if r.Delegation != nil {
		return r.String("delegation"), nil
	}
	t, err := n.ns.GetDelegationToken(ctx, delegation.ShortName(r.User))
	if err != nil {
		return "", err
	}
	if t == nil {
		return "", ipc.Errorf(ipc.ClassIOException, "Failed to generate a delegation token for the redirect: the NameNode issues no tokens")
	}
	t.Kind, t.Service = delegation.WebHDFSKind, n.RPCAddr()
	return t.EncodeToURLString(), nil
}

// webCreate checks CREATE's parameters, so a bad one fails before any
// data is sent, and redirects to the least busy
// live DataNode, which creates the file (as the user, so permissions are
// checked there) and writes the data through the pipeline.
func (n *NameNode) webCreate(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	if _, err := r.CreateParams(); err != nil {
		return err
	}
	return n.webRedirect(ctx, w, r, leastBusy(datanodeProtos(n.ns.DatanodeReport(blockmgmt.ReportLive))))
}

func (n *NameNode) webMkdirs(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	perm, err := r.Permission(0o755)
	if err != nil {
		return err
	}
	if err := n.ns.Mkdirs(ctx, r.Path, perm, true); err != nil {
		return err
	}
	webhdfs.Boolean(w, true)
	return nil
}

func (n *NameNode) webRename(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	dst, err := r.Absolute("destination")
	if err != nil {
		return err
	}
	if opts := r.String("renameoptions"); opts != "" {
		// With rename options, Hadoop uses rename2 (the exact new name;
		// OVERWRITE replaces a file or empty directory) and answers nothing.
		overwrite := false
		for _, o := range strings.Split(opts, ",") {
			switch strings.ToUpper(strings.TrimSpace(o)) {
			case "NONE":
			case "OVERWRITE":
				overwrite = true
			default:
				return ipc.Errorf(webhdfs.ClassJavaIllegalArgument, "Invalid value for webhdfs parameter \"renameoptions\": %q is not NONE or OVERWRITE", o)
			}
		}
		_, err := n.ns.Rename(ctx, r.Path, dst, false, overwrite)
		return webDone(w, err)
	}
	ok, err := n.ns.Rename(ctx, r.Path, dst, true, false)
	if err != nil {
		return err
	}
	webhdfs.Boolean(w, ok)
	return nil
}

func (n *NameNode) webSetPermission(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	perm, err := r.Permission(0o755)
	if err != nil {
		return err
	}
	return webDone(w, n.ns.SetPermission(ctx, r.Path, perm))
}

// webDone answers an operation that returns no body: 200, or its error.
func webDone(w http.ResponseWriter, err error) error {
	if err == nil {
		webhdfs.WriteEmpty(w, http.StatusOK)
	}
	return err
}

func (n *NameNode) webSetOwner(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	owner, group := r.String("owner"), r.String("group")
	if owner == "" && group == "" {
		return ipc.Errorf(webhdfs.ClassJavaIllegalArgument, "Both owner and group are empty.")
	}
	return webDone(w, n.ns.SetOwner(ctx, r.Path, owner, group))
}

func (n *NameNode) webSetReplication(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	repl, err := r.Int("replication", int64(n.cfg.DefaultReplication), 1, 32767)
	if err != nil {
		return err
	}
	ok, err := n.ns.SetReplication(ctx, r.Path, int(repl))
	if err != nil {
		return err
	}
	webhdfs.Boolean(w, ok)
	return nil
}

func (n *NameNode) webSetTimes(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	mtime, err := r.Int("modificationtime", -1, -1, 1<<62)
	if err != nil {
		return err
	}
	atime, err := r.Int("accesstime", -1, -1, 1<<62)
	if err != nil {
		return err
	}
	return webDone(w, n.ns.SetTimes(ctx, r.Path, mtime, atime))
}

func (n *NameNode) webSetStoragePolicy(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	name, err := r.Required("storagepolicy")
	if err != nil {
		return err
	}
	return webDone(w, n.ns.SetStoragePolicy(ctx, r.Path, name))
}

func (n *NameNode) webUnsetStoragePolicy(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	return webDone(w, n.ns.SetStoragePolicy(ctx, r.Path, ""))
}

func (n *NameNode) webDelete(ctx context.Context, w http.ResponseWriter, r *webhdfs.Request) error {
	recursive, err := r.Bool("recursive", false)
	if err != nil {
		return err
	}
	ok, err := n.ns.Delete(ctx, r.Path, recursive)
	if err != nil {
		return err
	}
	webhdfs.Boolean(w, ok)
	return nil
}
