package hdfs

import (
	"context"
	"os"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// InodePath returns the path that names inode id on any NameNode that
// resolves HDFS's inode paths: /.reserved/.inodes/<id>.
func InodePath(id uint64) string { return "/.reserved/.inodes/" + strconv.FormatUint(id, 10) }

// StatInode returns the status of the file or directory with inode id.
// Path is the inode's current full path when the NameNode reports it (a
// strata NameNode does), else InodePath(id), which is just as usable in
// further calls.
func (c *Client) StatInode(ctx context.Context, id uint64) (fs.FileStatus, error) {
	p := InodePath(id)
	var resp hdfspb.GetFileInfoResponseProto
	if err := c.call(ctx, "getFileInfo", &hdfspb.GetFileInfoRequestProto{Src: proto.String(p)}, &resp); err != nil {
		return fs.FileStatus{}, pathErr("stat", p, err)
	}
	if resp.Fs == nil {
		return fs.FileStatus{}, &os.PathError{Op: "stat", Path: p, Err: os.ErrNotExist}
	}
	if full := string(resp.Fs.GetPath()); len(full) > 0 && full[0] == '/' {
		p = full
	}
	return toStatus(p, resp.Fs), nil
}

// Access checks, as Hadoop's FileSystem.access does, that the client's
// user may act on path with the permission bits in mode (4 read, 2 write,
// 1 execute, as in a mode's owner digit): nil if so, an error wrapping
// os.ErrPermission if not.
func (c *Client) Access(ctx context.Context, path string, mode uint8) error {
	if mode > 7 {
		return &os.PathError{Op: "access", Path: path, Err: os.ErrInvalid}
	}
	req := &hdfspb.CheckAccessRequestProto{Path: proto.String(path), Mode: hdfspb.AclEntryProto_FsActionProto(mode).Enum()}
	if err := c.call(ctx, "checkAccess", req, &hdfspb.CheckAccessResponseProto{}); err != nil {
		return pathErr("access", path, err)
	}
	return nil
}
