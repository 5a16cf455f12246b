package experiment

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockWorkDir takes dir for this process for as long as the experiment
// runs: each profile's cluster is made afresh under it (its old contents
// removed), so a second experiment with the same directory would delete
// the first's clusters under their daemons. The lock is the kernel's
// (flock on the directory itself), so a killed experiment leaves none
// behind, and no file is added to the directory.
func lockWorkDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("experiment: %s is in use by another experiment; give this one another output directory", dir)
		}
		return nil, fmt.Errorf("experiment: locking %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
