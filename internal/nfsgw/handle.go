package nfsgw

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"strings"

	billy "github.com/go-git/go-billy/v5"
	nfs "github.com/willscott/go-nfs"

	"github.com/stratafs/strata/hdfs"
)

// File handles name inodes, not paths, so they survive renames and
// gateway restarts (docs/format/nfs-handles.md):
//
//	0      2        3          4                   12
//	+------+--------+----------+-------------------+
//	| "SG" | ver=1  | reserved | inode id (BE u64) |
//	+------+--------+----------+-------------------+
const (
	handleLen     = 12
	handleVersion = 1
)

// rootID is the inode id of "/" on HDFS and strata.
const rootID = 16385

var errBadHandle = errors.New("nfsgw: not a strata file handle")

func encodeHandle(id uint64) []byte {
	h := make([]byte, handleLen)
	h[0], h[1], h[2] = 'S', 'G', handleVersion
	binary.BigEndian.PutUint64(h[4:], id)
	return h
}

func decodeHandle(h []byte) (uint64, error) {
	if len(h) != handleLen || h[0] != 'S' || h[1] != 'G' || h[2] != handleVersion || h[3] != 0 {
		return 0, errBadHandle
	}
	id := binary.BigEndian.Uint64(h[4:])
	if id == 0 {
		return 0, errBadHandle
	}
	return id, nil
}

// connHandler is go-nfs's Handler for one connection: its front knows the
// credentials of the request being served, which picks the user's file
// system.
type connHandler struct {
	g *Gateway
	f *front
}

var (
	_ nfs.Handler        = (*connHandler)(nil)
	_ nfs.CachingHandler = (*connHandler)(nil)
)

// Mount implements nfs.Handler. Only "/" is exported (nfs.export.point).
func (h *connHandler) Mount(ctx context.Context, c net.Conn, req nfs.MountRequest) (nfs.MountStatus, billy.Filesystem, []nfs.AuthFlavor) {
	dir := string(req.Dirpath)
	if dir != "/" && dir != "" {
		h.g.log.Info("nfs3: mount refused: only / is exported", "dir", dir, "remote", c.RemoteAddr())
		return nfs.MountStatusErrNoEnt, nil, nil
	}
	u, err := h.g.fsFor(h.f.user())
	if err != nil {
		h.g.log.Error("nfs3: mount", "err", err)
		return nfs.MountStatusErrServerFault, nil, nil
	}
	return nfs.MountStatusOk, u, []nfs.AuthFlavor{nfs.AuthFlavorUnix, nfs.AuthFlavorNull}
}

// Change implements nfs.Handler.
func (h *connHandler) Change(fs billy.Filesystem) billy.Change {
	if u, ok := fs.(*userFS); ok {
		return u
	}
	return nil
}

// FSStat implements nfs.Handler with the NameNode's capacity figures.
func (h *connHandler) FSStat(ctx context.Context, fs billy.Filesystem, st *nfs.FSStat) error {
	u, ok := fs.(*userFS)
	if !ok {
		return errBadHandle
	}
	cctx, cancel := u.ctx()
	defer cancel()
	s, err := u.c.Status(cctx)
	if err != nil {
		return err
	}
	st.TotalSize = uint64(s.Capacity)
	st.FreeSize = uint64(s.Remaining)
	st.AvailableSize = uint64(s.Remaining)
	st.TotalFiles = 1 << 40
	st.FreeFiles = 1 << 40
	st.AvailableFiles = 1 << 40
	return nil
}

// ToHandle implements nfs.Handler.
func (h *connHandler) ToHandle(fs billy.Filesystem, p []string) []byte {
	if len(p) == 0 {
		return encodeHandle(rootID)
	}
	u, ok := fs.(*userFS)
	if !ok {
		return nil
	}
	id, err := u.idOf(u.Join(p...))
	if err != nil {
		h.g.log.Debug("nfs3: no handle", "path", u.Join(p...), "err", err)
		return nil
	}
	return encodeHandle(id)
}

// FromHandle implements nfs.Handler: the inode's current path, resolved
// by the NameNode as the calling user.
func (h *connHandler) FromHandle(fh []byte) (billy.Filesystem, []string, error) {
	id, err := decodeHandle(fh)
	if err != nil {
		return nil, nil, err
	}
	u, err := h.g.fsFor(h.f.user())
	if err != nil {
		return nil, nil, err
	}
	if id == rootID {
		return u, nil, nil
	}
	p, err := h.g.pathOf(u, id)
	if err != nil {
		return nil, nil, err
	}
	return u, splitPath(p), nil
}

// InvalidateHandle implements nfs.Handler: handles never change meaning.
func (h *connHandler) InvalidateHandle(billy.Filesystem, []byte) error { return nil }

// HandleLimit implements nfs.Handler; go-nfs sends at most half of it in
// one READDIRPLUS reply.
func (h *connHandler) HandleLimit() int { return 2048 }

// pathOf returns the current path of inode id as u sees it.
func (g *Gateway) pathOf(u *userFS, id uint64) (string, error) {
	if p, ok := g.writes.pathOf(id); ok {
		return p, nil
	}
	ctx, cancel := u.ctx()
	defer cancel()
	st, err := u.c.StatInode(ctx, id)
	switch {
	case err == nil:
		u.remember(st) // go-nfs looks at the file again at once
		return st.Path, nil
	case errors.Is(err, os.ErrNotExist):
		return "", osErr("stat", hdfs.InodePath(id), err)
	default:
		// Permission denied on the way, say: go on with the inode path so
		// the operation itself fails with the right NFS status, not STALE.
		return hdfs.InodePath(id), nil
	}
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}
