package namenode

import (
	"context"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// Inode paths. As in HDFS, /.reserved/.inodes/<id>[/rest] names the inode
// with that id (and a path below it), so a client that kept only an id —
// the NFS gateway's file handles — can reach the inode after any rename or
// restart. "/.reserved/.inodes/<id>/.." is the inode's parent directory.
//
// Resolution happens once, when a ClientProtocol request arrives: the
// request's path fields (src, dst, path) are rewritten to the inode's
// current full path, so every operation, its permission checks, its edit
// records and its leases see ordinary paths. The id is looked up under the
// namespace lock, but the operation runs afterwards: an inode renamed in
// between is reported as not found, the same race HDFS has.
//
// One strata extension: getFileInfo on an inode path answers with the
// inode's full path in the status's path field (HDFS leaves it empty), so
// a gateway can turn an id back into a path in one call.
const reservedInodes = "/.reserved/.inodes"

// resolveInodePath returns the ordinary path that p names; p itself when
// it is not an inode path.
func (s *Namesystem) resolveInodePath(p string) (string, error) {
	if p != reservedInodes && !strings.HasPrefix(p, reservedInodes+"/") {
		return p, nil
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(p, reservedInodes), "/")
	idStr, tail, _ := strings.Cut(rest, "/")
	id, err := strconv.ParseUint(idStr, 10, 64)
	if err != nil {
		return "", ipc.Errorf(ipc.ClassFileNotFound, "Invalid inode path: %s", p)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := s.tree.Inode(id)
	if n == nil {
		return "", ipc.Errorf(ipc.ClassFileNotFound, "File for given inode path does not exist: %s", p)
	}
	if tail == ".." {
		if n.Parent == nil {
			return "/", nil
		}
		return n.Parent.Path(), nil
	}
	base := n.Path()
	switch {
	case tail == "":
		return base, nil
	case base == "/":
		return "/" + tail, nil
	default:
		return base + "/" + tail, nil
	}
}

// pathFields are the ClientProtocol request fields that hold paths.
var pathFields = []protoreflect.Name{"src", "dst", "path"}

// withInodePaths wraps a protocol's methods so inode paths in requests are
// resolved before the handler runs.
func withInodePaths(s *Namesystem, methods map[string]ipc.Method) map[string]ipc.Method {
	out := make(map[string]ipc.Method, len(methods))
	for name, m := range methods {
		getFileInfo := name == "getFileInfo"
		out[name] = m.Around(func(ctx context.Context, req proto.Message, next func(context.Context, proto.Message) (proto.Message, error)) (proto.Message, error) {
			resolved, err := s.resolveRequestPaths(req)
			if err != nil {
				return nil, err
			}
			resp, err := next(ctx, req)
			if getFileInfo && resolved != "" && err == nil {
				if r, ok := resp.(*hdfspb.GetFileInfoResponseProto); ok && r.Fs != nil {
					r.Fs.Path = []byte(resolved)
				}
			}
			return resp, err
		})
	}
	return out
}

// resolveRequestPaths rewrites the inode paths among req's path fields and
// returns the resolved src ("" when src was not an inode path).
func (s *Namesystem) resolveRequestPaths(req proto.Message) (string, error) {
	m := req.ProtoReflect()
	fields := m.Descriptor().Fields()
	var src string
	for _, name := range pathFields {
		fd := fields.ByName(name)
		if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() || !m.Has(fd) {
			continue
		}
		p := m.Get(fd).String()
		if !strings.HasPrefix(p, reservedInodes) {
			continue
		}
		real, err := s.resolveInodePath(p)
		if err != nil {
			return "", err
		}
		m.Set(fd, protoreflect.ValueOfString(real))
		if name == "src" {
			src = real
		}
	}
	return src, nil
}
