package tasktracker

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// credential is who an attempt of user's job runs as: nil (the
// TaskTracker's own user) with the default task controller; with
// LinuxTaskController the job user's uid, primary gid and groups, or an
// error for an unknown user or one below MinUserID (root among them:
// under simple authentication anyone can claim to be root).
func (tt *TaskTracker) credential(name string) (*syscall.Credential, error) {
	if tt.cfg.TaskController != LinuxTaskController {
		return nil, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("tasktracker: cannot run the task as user %q: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("tasktracker: cannot run the task as user %q: uid %q, gid %q", name, u.Uid, u.Gid)
	}
	if uid < MinUserID {
		return nil, fmt.Errorf("tasktracker: Requested user %s has id %d, which is below the minimum allowed %d", name, uid, MinUserID)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil {
				cred.Groups = append(cred.Groups, uint32(g))
			}
		}
	}
	return cred, nil
}

// chown gives path to the attempt's user (nothing without one).
func chown(path string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("tasktracker: giving %s to uid %d: %w", path, cred.Uid, err)
	}
	return nil
}
