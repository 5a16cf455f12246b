package jobtracker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
)

// historyView is what the web UI keeps to read the history dir: one file
// system client, opened on first use and kept (dropped after an error, so
// the next view opens another), and the parsed histories of the last
// listing by file name and modification time, so a view reads only the
// files that are new or changed.
type historyView struct {
	mu    sync.Mutex
	fsys  fs.FileSystem
	root  string
	cache map[string]cachedHistory
	// open resolves the history dir (nil: fs.Resolve); tests count it.
	open func(ctx context.Context, dir string, env fs.Env) (fs.FileSystem, string, error)
}

type cachedHistory struct {
	mtime time.Time
	h     *History
}

// client is the shared file system of the history dir and the dir's path
// in it. hv.mu held.
func (jt *JobTracker) historyClient(ctx context.Context) (fs.FileSystem, string, error) {
	hv := &jt.ui.hist
	if hv.fsys != nil {
		return hv.fsys, hv.root, nil
	}
	if jt.cfg.HistoryDir == "" {
		return nil, "", fmt.Errorf("no history dir (%s)", keyHistoryDir)
	}
	c := jt.cfg.HistoryConf
	if c == nil {
		c = conf.New()
	}
	open := hv.open
	if open == nil {
		open = fs.Resolve
	}
	fsys, p, err := open(ctx, jt.cfg.HistoryDir, fs.Env{Conf: c, User: jt.cfg.User})
	if err != nil {
		return nil, "", err
	}
	hv.fsys, hv.root = fsys, p
	return fsys, p, nil
}

// dropHistoryClient closes the shared client after an error. hv.mu held.
func (jt *JobTracker) dropHistoryClient() {
	if hv := &jt.ui.hist; hv.fsys != nil {
		hv.fsys.Close()
		hv.fsys = nil
	}
}

func (jt *JobTracker) closeHistoryView() {
	jt.ui.hist.mu.Lock()
	jt.dropHistoryClient()
	jt.ui.hist.mu.Unlock()
}

// readHistory reads job id's history file through the shared client.
func (jt *JobTracker) readHistory(ctx context.Context, id string) (*History, error) {
	if strings.ContainsAny(id, "/\\") || !strings.HasPrefix(id, "job_") {
		return nil, fmt.Errorf("bad job id %q", id)
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	hv := &jt.ui.hist
	hv.mu.Lock()
	fsys, root, err := jt.historyClient(ctx)
	hv.mu.Unlock()
	if err != nil {
		return nil, err
	}
	h, err := parseHistoryFile(ctx, fsys, historyPath(root, id))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		hv.mu.Lock()
		if hv.fsys == fsys {
			jt.dropHistoryClient()
		}
		hv.mu.Unlock()
	}
	return h, err
}

func parseHistoryFile(ctx context.Context, fsys fs.FileSystem, p string) (*History, error) {
	f, err := fsys.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var h History
	if err := json.NewDecoder(io.LimitReader(f, maxHistory)).Decode(&h); err != nil {
		return nil, fmt.Errorf("history %s: %w", p, err)
	}
	return &h, nil
}

// listHistories appends the newest maxHistoryList histories, newest
// first, and sets more when the dir holds others. Only files not in the
// cache with the same modification time are read.
func (jt *JobTracker) listHistories(ctx context.Context, out *[]*History, more *bool) error {
	hv := &jt.ui.hist
	hv.mu.Lock()
	defer hv.mu.Unlock() // one listing at a time: each shares the cache
	fsys, root, err := jt.historyClient(ctx)
	if err != nil {
		return err
	}
	ents, err := fsys.List(ctx, root)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		jt.dropHistoryClient()
		return err
	}
	var files []fs.FileStatus
	for _, e := range ents {
		name := path.Base(e.Path)
		if !e.IsDir && strings.HasPrefix(name, "job_") && strings.HasSuffix(name, ".json") {
			files = append(files, e)
		}
	}
	// Job ids sort by start, then sequence.
	sort.Slice(files, func(a, b int) bool { return path.Base(files[a].Path) > path.Base(files[b].Path) })
	if len(files) > maxHistoryList {
		files, *more = files[:maxHistoryList], true
	}
	hs := make([]*History, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, e := range files {
		if c, ok := hv.cache[path.Base(e.Path)]; ok && c.mtime.Equal(e.ModTime) {
			hs[i] = c.h
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if h, err := parseHistoryFile(ctx, fsys, e.Path); err == nil {
				hs[i] = h
			}
		}()
	}
	wg.Wait()
	cache := make(map[string]cachedHistory, len(files))
	for i, e := range files {
		if hs[i] != nil {
			cache[path.Base(e.Path)] = cachedHistory{mtime: e.ModTime, h: hs[i]}
			*out = append(*out, hs[i])
		}
	}
	hv.cache = cache
	return nil
}
