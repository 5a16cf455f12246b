package histcheck

import (
	"context"
	"errors"
	"io"
	"io/fs"

	sfs "github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
)

// HDFS adapts a strata HDFS client to FS. Failover and its retries are
// the client's: every error it returns is classified as it is.
type HDFS struct {
	C *hdfs.Client
}

// NewHDFS returns c as an FS.
func NewHDFS(c *hdfs.Client) HDFS { return HDFS{C: c} }

// WriteFile implements FS with create(overwrite, createParent).
func (h HDFS) WriteFile(ctx context.Context, p string, data []byte) error {
	return h.put(ctx, p, data, true)
}

// CreateFile implements FS with create(createParent), no overwrite.
func (h HDFS) CreateFile(ctx context.Context, p string, data []byte) error {
	return h.put(ctx, p, data, false)
}

func (h HDFS) put(ctx context.Context, p string, data []byte, overwrite bool) error {
	w, err := h.C.CreateFile(ctx, p, sfs.CreateOptions{Overwrite: overwrite, CreateParent: true})
	if err != nil {
		return err
	}
	_, werr := w.Write(data)
	// FileWriter.Close waits for complete on its own deadline, not ctx's;
	// past ctx the outcome is unknown and Close finishes unobserved.
	done := make(chan error, 1)
	go func() { done <- w.Close() }()
	select {
	case cerr := <-done:
		return errors.Join(werr, cerr)
	case <-ctx.Done():
		return errors.Join(werr, ctx.Err())
	}
}

// ReadFile implements FS, keeping at most MaxRead+1 bytes.
func (h HDFS) ReadFile(ctx context.Context, p string) ([]byte, error) {
	r, err := h.C.OpenFile(ctx, p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, MaxRead+1))
}

// Rename implements FS with rename2(OVERWRITE).
func (h HDFS) Rename(ctx context.Context, src, dst string) error {
	return h.C.Rename2(ctx, src, dst, true)
}

// Delete implements FS with a non-recursive delete.
func (h HDFS) Delete(ctx context.Context, p string) error {
	return h.C.Delete(ctx, p, false)
}

// Exists implements FS with getFileInfo.
func (h HDFS) Exists(ctx context.Context, p string) (bool, error) {
	_, err := h.C.Stat(ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
