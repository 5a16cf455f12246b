package namenode

import (
	"context"
	"io"
	"log/slog"
	"sync"
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
	nn.trashTick(ctx, now)
	now = now.Add(4 * time.Minute)
	nn.trashTick(ctx, now)
	if !exists("/user/bob/.Trash/Current") {
		t.Fatal("emptier ran before its time")
	}
	now = now.Add(time.Minute) // 14:05
	nn.trashTick(ctx, now)
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
	nn.trashTick(ctx, now)
	if !exists("/user/bob/.Trash/261201140500") {
		t.Fatal("checkpoint deleted at exactly the interval")
	}
	now = now.Add(5 * time.Minute)
	nn.trashTick(ctx, now)
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

// The emptier has its own goroutine (Hadoop's Emptier thread): while a
// run waits (on the journal, here on the test), the monitor still rolls
// block keys; Close cancels the waiting run and stops the goroutine.
func TestTrashEmptierRunsApartFromTheMonitor(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NameDir = t.TempDir()
	cfg.RPCAddr, cfg.HTTPAddr = "127.0.0.1:0", ""
	cfg.Superuser = "hdfs"
	cfg.SafeModeThreshold, cfg.SafeModeExtension = 0, 0
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.BlockTokens, cfg.BlockKeyUpdateInterval = true, time.Hour
	cfg.ReplicationInterval = 20 * time.Millisecond
	cfg.TrashInterval, cfg.TrashCheckpointInterval = 10*time.Minute, 10*time.Minute
	if _, err := Format(cfg, false); err != nil {
		t.Fatal(err)
	}
	nn, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	now := time.Now()
	advance := func(d time.Duration) {
		mu.Lock()
		now = now.Add(d)
		mu.Unlock()
	}
	nn.ns.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	entered, stopped := make(chan struct{}, 1), make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	nn.emptyTrash = func(ctx context.Context, _ time.Time, _ time.Duration) error {
		select {
		case entered <- struct{}{}:
		default:
		}
		select { // a run that waits until Close
		case <-ctx.Done():
		case <-release: // the test failed; let Close return
		}
		once.Do(func() { close(stopped) })
		return ctx.Err()
	}
	if err := nn.Start(); err != nil {
		t.Fatal(err)
	}
	defer nn.Close()
	defer close(release)
	keyGen := func() uint64 {
		nn.keys.mu.Lock()
		defer nn.keys.mu.Unlock()
		return nn.keys.gen
	}
	deadline := time.After(10 * time.Second)
	for running := false; !running; {
		advance(11 * time.Minute)
		select {
		case <-entered:
			running = true
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatal("the emptier never ran")
		}
	}
	gen := keyGen()
	advance(time.Hour + time.Second)
	for keyGen() == gen {
		select {
		case <-deadline:
			t.Fatal("block keys did not roll while the emptier was busy: the monitor waits for it")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := nn.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	default:
		t.Fatal("Close returned with the emptier's run still going")
	}
}
