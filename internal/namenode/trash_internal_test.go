package namenode

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

func TestTrashEmptier(t *testing.T) {
	ns, _ := testNS(t)
	now := time.Date(2026, 12, 1, 14, 0, 0, 0, time.Local)
	ns.now = func() time.Time { return now }
	ctx := context.Background()
	exists := func(p string) bool {
		st, err := ns.FileInfo(ctx, p)
		return err == nil && st != nil
	}
	mustOK(t, ns.Mkdirs(ctx, "/user/bob/.Trash/Current/user/bob/x", 0o700, true))
	mustOK(t, ns.Mkdirs(ctx, "/user/carol/.Trash/Current/y", 0o700, true))
	mustOK(t, ns.Mkdirs(ctx, "/user/bob/.Trash/not-a-checkpoint", 0o700, true))
	mustOK(t, ns.Mkdirs(ctx, "/user/dave", 0o700, true)) // no trash

	nn := &NameNode{cfg: Config{TrashInterval: 10 * time.Minute, TrashCheckpointInterval: 5 * time.Minute}, ns: ns,
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	// The first tick only schedules the run at the next multiple of the
	// interval (14:05); nothing runs before it.
	nn.trashTick(now)
	now = now.Add(4 * time.Minute)
	nn.trashTick(now)
	if !exists("/user/bob/.Trash/Current") {
		t.Fatal("emptier ran before its time")
	}
	now = now.Add(time.Minute) // 14:05
	nn.trashTick(now)
	for _, p := range []string{"/user/bob/.Trash/261201140500/user/bob/x", "/user/carol/.Trash/261201140500/y"} {
		if !exists(p) {
			t.Fatalf("no checkpoint %s", p)
		}
	}
	if exists("/user/bob/.Trash/Current") {
		t.Fatal("Current still there after the checkpoint")
	}
	// A checkpoint of the same second gets a suffix.
	mustOK(t, ns.Mkdirs(ctx, "/user/bob/.Trash/Current/z", 0o700, true))
	cp, err := ns.TrashCheckpoint(ctx, "/user/bob/.Trash", now)
	mustOK(t, err)
	if cp != "/user/bob/.Trash/261201140500-1" {
		t.Fatalf("second checkpoint %q", cp)
	}
	// Ten minutes on (14:15) the checkpoints are kept: not older than
	// fs.trash.interval yet. Past it they go; other names stay.
	now = now.Add(10 * time.Minute)
	nn.trashTick(now)
	if !exists("/user/bob/.Trash/261201140500") {
		t.Fatal("checkpoint deleted at exactly the interval")
	}
	now = now.Add(5 * time.Minute)
	nn.trashTick(now)
	for _, p := range []string{"/user/bob/.Trash/261201140500", "/user/bob/.Trash/261201140500-1", "/user/carol/.Trash/261201140500"} {
		if exists(p) {
			t.Fatalf("%s not expired", p)
		}
	}
	if !exists("/user/bob/.Trash/not-a-checkpoint") {
		t.Fatal("the emptier deleted a directory that is not a checkpoint")
	}
	if _, ok := TrashCheckpointTime("261201140500-3"); !ok {
		t.Fatal("suffixed checkpoint name does not parse")
	}
}
