package editlog

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/stratafs/strata/internal/vfs"
)

// The storage holds the delegation token master keys (in images and edit
// records), so only the NameNode's user may read it: directories 0700,
// as Hadoop's dfs.namenode.storage.dir.perm default, and files 0600.
// strata does not make the mode configurable.
const (
	dirPerm  os.FileMode = 0o700
	filePerm os.FileMode = 0o600
)

// tighten removes group and other access from a storage directory made
// by an older strata (0755 directories, 0644 files): the directory,
// current/ and the files in current/. An FS that cannot chmod is left
// as it is.
func tighten(fsys vfs.FS, dir string) error {
	chmod := func(path string, want os.FileMode) error {
		st, err := fsys.Stat(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if st.Mode().Perm()&^want == 0 {
			return nil
		}
		if err := vfs.Chmod(fsys, path, st.Mode().Perm()&want); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
		return nil
	}
	if err := chmod(dir, dirPerm); err != nil {
		return err
	}
	cur := filepath.Join(dir, currentDir)
	if err := chmod(cur, dirPerm); err != nil {
		return err
	}
	ents, err := fsys.ReadDir(cur)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Type().IsRegular() {
			if err := chmod(filepath.Join(cur, e.Name()), filePerm); err != nil {
				return err
			}
		}
	}
	return nil
}
