package namenode

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/ipc"
)

// The trash (Hadoop's TrashPolicyDefault): `dfs -rm` moves a path to
// /user/<user>/.Trash/Current/<path> instead of deleting it when
// fs.trash.interval is set (clients take the NameNode's value from the
// server defaults). The NameNode's emptier, every checkpoint interval,
// renames each user's Current to a checkpoint named by the time
// (yyMMddHHmmss) and deletes the checkpoints older than fs.trash.interval.
// It changes the namespace through the ordinary Rename and Delete as the
// superuser, so its work is logged and replayed like any client's.

const (
	keyTrashInterval           = "fs.trash.interval"
	keyTrashCheckpointInterval = "fs.trash.checkpoint.interval"
)

// TrashCheckpointFormat is Hadoop's checkpoint name format (yyMMddHHmmss)
// in Go's layout.
const TrashCheckpointFormat = "060102150405"

// TrashCurrent is the name of the directory trash moves go to.
const TrashCurrent = "Current"

func trashConfigFrom(r *conf.Reader, cfg *Config) {
	cfg.TrashInterval = r.Duration(keyTrashInterval, time.Minute)
	cfg.TrashCheckpointInterval = r.Duration(keyTrashCheckpointInterval, time.Minute)
}

// trashEmptier is the NameNode's trash emptier; only its goroutine
// (emptierLoop) uses it.
type trashEmptier struct {
	next time.Time // when the next run is due; zero before the first tick
}

// emptierInterval is how often the emptier runs: the checkpoint interval,
// or the trash interval when that is unset or longer (as Hadoop).
func (c Config) emptierInterval() time.Duration {
	iv := c.TrashCheckpointInterval
	if iv <= 0 || iv > c.TrashInterval {
		iv = c.TrashInterval
	}
	return iv
}

// emptierLoop is the trash emptier's goroutine (Hadoop's Emptier thread):
// its renames and deletes each wait for the journal, so they must not hold
// up the monitor's lease expiry and key rolling. It wakes every poll and
// reads the Namesystem's clock (tests move that clock); Close stops it,
// cancelling the run in progress.
func (n *NameNode) emptierLoop(poll time.Duration) {
	if n.cfg.TrashInterval <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-n.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		if ctx.Err() != nil || n.stopped() {
			return
		}
		if n.ServiceState() == HAActive {
			n.trashTick(ctx, n.ns.now())
		}
	}
}

// trashTick runs the emptier when its time has come. Runs are aligned to
// multiples of the interval (Hadoop's Emptier.ceiling).
func (n *NameNode) trashTick(ctx context.Context, now time.Time) {
	iv := n.cfg.emptierInterval()
	if n.cfg.TrashInterval <= 0 || iv <= 0 {
		return
	}
	if n.trash == nil {
		n.trash = &trashEmptier{}
	}
	if n.trash.next.IsZero() {
		n.trash.next = now.Truncate(iv).Add(iv)
		return
	}
	if now.Before(n.trash.next) {
		return
	}
	n.trash.next = now.Truncate(iv).Add(iv)
	empty := n.emptyTrash
	if empty == nil {
		empty = n.ns.EmptyTrash
	}
	if err := empty(ctx, now, n.cfg.TrashInterval); err != nil {
		n.log.Warn("namenode: trash emptier", "err", err)
	}
}

// EmptyTrash is one run of the trash emptier at time now: for every
// /user/<name>/.Trash, a checkpoint of Current is made and the
// checkpoints older than keep are deleted. It runs as the superuser.
func (s *Namesystem) EmptyTrash(ctx context.Context, now time.Time, keep time.Duration) error {
	var errs []string
	for _, root := range s.trashRoots() {
		if _, err := s.TrashCheckpoint(ctx, root, now); err != nil {
			errs = append(errs, err.Error())
		}
		if _, err := s.DeleteTrashCheckpoints(ctx, root, now, keep, false); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// trashRoots lists the trash directories of every user's home.
func (s *Namesystem) trashRoots() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	users := s.tree.Lookup("/user")
	if users == nil || !users.IsDir {
		return nil
	}
	var out []string
	for _, home := range users.Children {
		if t := home.Child(".Trash"); home.IsDir && t != nil && t.IsDir {
			out = append(out, path.Join("/user", home.Name, ".Trash"))
		}
	}
	return out
}

// TrashCheckpoint renames root/Current to root/<now as yyMMddHHmmss>
// (with -1, -2, ... appended when that exists, as Hadoop's
// createCheckpoint) and returns the checkpoint's path, or "" when there is
// no Current.
func (s *Namesystem) TrashCheckpoint(ctx context.Context, root string, now time.Time) (string, error) {
	cur := path.Join(root, TrashCurrent)
	if st, err := s.FileInfo(ctx, cur); err != nil || st == nil {
		return "", err
	}
	base := path.Join(root, now.Format(TrashCheckpointFormat))
	cp := base
	for attempt := 0; attempt < 1000; attempt++ {
		_, err := s.Rename(ctx, cur, cp, false, false)
		if err == nil {
			s.log.Info("namenode: created trash checkpoint", "path", cp)
			return cp, nil
		}
		if !ipc.IsClass(err, ipc.ClassFileAlreadyExists) {
			return "", err
		}
		cp = fmt.Sprintf("%s-%d", base, attempt+1)
	}
	return "", fmt.Errorf("namenode: no free trash checkpoint name at %s", base)
}

// DeleteTrashCheckpoints deletes the checkpoints under root older than
// keep at time now (all of them with immediate) and returns their paths.
// Names that are not checkpoints are left alone.
func (s *Namesystem) DeleteTrashCheckpoints(ctx context.Context, root string, now time.Time, keep time.Duration, immediate bool) ([]string, error) {
	s.mu.RLock()
	var names []string
	if dir := s.tree.Lookup(root); dir != nil && dir.IsDir {
		for _, c := range dir.Children {
			if c.IsDir && c.Name != TrashCurrent {
				names = append(names, c.Name)
			}
		}
	}
	s.mu.RUnlock()
	var deleted []string
	for _, name := range names {
		t, ok := TrashCheckpointTime(name)
		if !ok {
			continue
		}
		if immediate || now.Add(-keep).After(t) {
			p := path.Join(root, name)
			if _, err := s.Delete(ctx, p, true); err != nil {
				return deleted, err
			}
			s.log.Info("namenode: deleted trash checkpoint", "path", p)
			deleted = append(deleted, p)
		}
	}
	return deleted, nil
}

// TrashCheckpointTime parses a checkpoint name (yyMMddHHmmss, optionally
// followed by -N) in local time.
func TrashCheckpointTime(name string) (time.Time, bool) {
	if len(name) < len(TrashCheckpointFormat) {
		return time.Time{}, false
	}
	if rest := name[len(TrashCheckpointFormat):]; rest != "" && rest[0] != '-' {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation(TrashCheckpointFormat, name[:len(TrashCheckpointFormat)], time.Local)
	return t, err == nil
}

// stopped reports whether Close has begun.
func (n *NameNode) stopped() bool {
	select {
	case <-n.stop:
		return true
	default:
		return false
	}
}
