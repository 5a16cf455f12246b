package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/testcluster"
)

func readAll(ctx context.Context, cl *hdfs.Client, p string) ([]byte, error) {
	f, err := cl.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// The web UIs, checked in a real headless Chromium against a cluster of
// real processes: every page loads without console errors or failed
// loads, shows the cluster's figures, its links answer, and the browse
// page's upload, mkdir and delete go through WebHDFS. Screenshots go to
// $STRATA_SCREENSHOTS (default: the test's temporary directory).

// chromium finds a Chromium or Chrome binary ($STRATA_CHROMIUM first).
func chromium() string {
	if p := os.Getenv("STRATA_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser is a headless Chromium tab that records console errors,
// uncaught exceptions, failed loads and error responses.
type browser struct {
	t    *testing.T
	ctx  context.Context
	mu   sync.Mutex
	errs []string
	dir  string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	exe := chromium()
	if exe == "" {
		t.Skip("no chromium binary (Debian: apt-get install chromium; or set STRATA_CHROMIUM): the web UI browser tests need one")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(1200, 860), chromedp.Flag("disable-gpu", true), chromedp.Flag("hide-scrollbars", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	// This chromedp's protocol types predate some of Chromium's network
	// events; those it cannot decode are of no interest here.
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithErrorf(func(format string, args ...any) {
		if msg := fmt.Sprintf(format, args...); !strings.Contains(msg, "could not unmarshal event") {
			fmt.Fprintln(os.Stderr, "chromedp:", msg)
		}
	}))
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	b := &browser{t: t, ctx: ctx, dir: os.Getenv("STRATA_SCREENSHOTS")}
	if b.dir == "" {
		b.dir = t.TempDir()
	}
	os.MkdirAll(b.dir, 0o755)
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *cdpruntime.EventConsoleAPICalled:
			if ev.Type == cdpruntime.APITypeError || ev.Type == cdpruntime.APITypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				b.fail("console %s: %s", ev.Type, strings.Join(args, " "))
			}
		case *cdpruntime.EventExceptionThrown:
			b.fail("exception: %s", ev.ExceptionDetails.Error())
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.LevelError {
				b.fail("log: %s (%s)", ev.Entry.Text, ev.Entry.URL)
			}
		case *page.EventJavascriptDialogOpening:
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(true)) // confirm deletes
		}
	})
	if err := chromedp.Run(ctx, cdplog.Enable(), cdpruntime.Enable()); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	t.Logf("chromium %s; screenshots in %s", exe, b.dir)
	return b
}

func (b *browser) fail(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errs = append(b.errs, fmt.Sprintf(format, args...))
}

// drop forgets the errors seen so far that contain s: expected ones.
func (b *browser) drop(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	keep := b.errs[:0]
	for _, e := range b.errs {
		if !strings.Contains(e, s) {
			keep = append(keep, e)
		}
	}
	b.errs = keep
}

// check fails the test with the errors the browser saw since the last
// check.
func (b *browser) check(where string) {
	b.t.Helper()
	b.mu.Lock()
	errs := b.errs
	b.errs = nil
	b.mu.Unlock()
	for _, e := range errs {
		b.t.Errorf("%s: %s", where, e)
	}
}

func (b *browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// open loads u and checks it loaded cleanly.
func (b *browser) open(u string) {
	b.t.Helper()
	t0 := time.Now()
	var footers int
	b.run("open "+u, chromedp.Navigate(u), chromedp.WaitReady("body", chromedp.ByQuery), chromedp.Evaluate(`document.querySelectorAll("footer").length`, &footers))
	if d := time.Since(t0); d > 2*time.Second {
		b.t.Logf("open %s took %v", u, d)
	}
	if footers != 1 {
		var body string
		b.eval(`document.body.innerText`, &body)
		b.t.Fatalf("%s is not a whole page:\n%.3000s", u, body)
	}
	b.check(u)
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	var s string
	b.run("text of "+sel, chromedp.Text(sel, &s, chromedp.ByQuery))
	return strings.TrimSpace(s)
}

func (b *browser) eval(js string, out any) {
	b.t.Helper()
	b.run("eval "+js, chromedp.Evaluate(js, out))
}

// screenshot writes the viewport as name.png.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	var png []byte
	b.run("screenshot", chromedp.CaptureScreenshot(&png))
	if err := os.WriteFile(filepath.Join(b.dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// until reloads u until cond holds, for up to timeout.
func (b *browser) until(u, what string, timeout time.Duration, cond func() bool) {
	b.t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(200 * time.Millisecond) {
		b.open(u)
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			var body string
			b.eval(`document.querySelector("main").innerText`, &body)
			b.t.Fatalf("%s: not so after %v; page:\n%s", what, timeout, body)
		}
	}
}

// checkLinks fetches every http link of the page (not the profiler's) and
// fails on an error status.
func (b *browser) checkLinks(where string) {
	b.t.Helper()
	var links []string
	b.eval(`Array.from(document.querySelectorAll("a[href]")).map(a => a.href).filter(h => h.startsWith("http"))`, &links)
	// The links are fetched as the browser would follow them: with its
	// cookies (the user a page's user.name named; the daemons share the
	// host, so one cookie serves them all).
	var cookies []*network.Cookie
	b.run("cookies", chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		cookies, err = network.GetCookies().Do(ctx)
		return err
	}))
	seen := map[string]bool{}
	for _, l := range links {
		if seen[l] || strings.Contains(l, "/debug/pprof") || strings.Contains(l, "/stacks") {
			continue
		}
		seen[l] = true
		req, err := http.NewRequest("GET", l, nil)
		if err != nil {
			b.t.Errorf("%s: link %s: %v", where, l, err)
			continue
		}
		for _, c := range cookies {
			req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.t.Errorf("%s: link %s: %v", where, l, err)
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.t.Errorf("%s: link %s: %s", where, l, resp.Status)
		}
	}
}

func TestWebUI(t *testing.T) {
	br := newBrowser(t)
	start := time.Now()
	jtHTTP := testcluster.FreePort(t)
	exclude := filepath.Join(t.TempDir(), "dfs.exclude")
	if err := os.WriteFile(exclude, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m := testcluster.NewProcess(t, testcluster.Config{DataNodes: 2, MapReduce: true, TaskTrackers: 2,
		Conf: map[string]string{"mapreduce.jobtracker.http.address": jtHTTP, "dfs.blocksize": "1048576", "dfs.replication": "2", "dfs.hosts.exclude": exclude}})
	m.WaitSafeModeOff()
	nn := "http://" + m.NameNodeHTTPAddr()
	su := m.Superuser()
	t.Logf("cluster up in %v", time.Since(start).Round(time.Millisecond))

	// A file of three blocks, written with an HDFS client.
	cl := m.Client(su)
	ctx := ctxT(t)
	data := bytes.Repeat([]byte("0123456789abcdef"), 3<<16) // 3 MiB
	if err := cl.Mkdirs(ctx, "/user/web", 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := cl.Create(ctx, "/user/web/data.bin", fs.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	t.Run("NameNode", func(t *testing.T) {
		br.t = t
		br.until(nn+"/", "two live DataNodes with capacity", 20*time.Second, func() bool {
			var typ string
			br.eval(`document.querySelector("#storagetypes tbody").innerText`, &typ)
			return br.text("#live") == "2" && strings.Contains(typ, "SSD") && strings.Contains(typ, "DISK")
		})
		if s := br.text("#files"); !strings.Contains(s, "1 files") {
			t.Errorf("overview's files: %q", s)
		}
		if s := br.text("#summary"); !regexp.MustCompile(`Configured capacity\s+[0-9.]+ [KMGT]B`).MatchString(s) {
			t.Errorf("summary has no human-readable capacity:\n%s", s)
		}
		br.screenshot("namenode-overview")
		br.checkLinks("overview")

		br.open(nn + "/datanodes")
		var rows int
		br.eval(`document.querySelectorAll("#datanodes tbody tr").length`, &rows)
		vols := br.text("#volumes")
		if rows != 2 || strings.Count(vols, "SSD") != 2 || strings.Count(vols, "DISK") != 2 {
			t.Errorf("datanodes page: %d rows, volumes:\n%s", rows, vols)
		}
		// Sorting: a click on the Blocks header orders the volumes by it,
		// a second click the other way.
		blocksCol := func() []int {
			var bs []int
			br.eval(`Array.from(document.querySelectorAll("#volumes tbody tr")).map(r => Number(r.cells[7].innerText))`, &bs)
			return bs
		}
		br.run("sort volumes", chromedp.Click("#volumes thead th:nth-child(8)", chromedp.ByQuery))
		asc := blocksCol()
		br.run("sort volumes", chromedp.Click("#volumes thead th:nth-child(8)", chromedp.ByQuery))
		desc := blocksCol()
		if len(asc) != 4 || asc[0] > asc[3] || desc[0] < desc[3] || asc[0] == desc[0] {
			t.Errorf("sorting volumes by blocks: %v then %v", asc, desc)
		}
		br.checkLinks("datanodes")

		br.open(nn + "/startup")
		if s := br.text("#startup"); !strings.Contains(s, "Safe mode") || !strings.Contains(s, "complete") {
			t.Errorf("startup page:\n%s", s)
		}
	})

	t.Run("Browse", func(t *testing.T) {
		br.t = t
		dir := nn + "/explorer?path=/user/web&user.name=" + su
		br.open(dir)
		listing := br.text("#listing")
		if !strings.Contains(listing, "data.bin") || !strings.Contains(listing, "3.00 MB") || !strings.Contains(listing, "-rw-r--r--") {
			t.Fatalf("listing of /user/web:\n%s", listing)
		}
		// The file's page: its three blocks, each on two DataNodes.
		br.run("click data.bin", chromedp.Click(`//a[text()="data.bin"]`, chromedp.BySearch), chromedp.WaitVisible("#blocks", chromedp.ByQuery))
		br.check("file page")
		var blocks []string
		br.eval(`Array.from(document.querySelectorAll("#blocks tbody tr")).map(r => r.cells[4].innerText)`, &blocks)
		if len(blocks) != 3 {
			t.Fatalf("data.bin has %d blocks on its page, want 3", len(blocks))
		}
		for i, locs := range blocks {
			if n := len(strings.FieldsFunc(locs, func(r rune) bool { return r == '\n' })); n != 2 {
				t.Errorf("block %d: %d locations, want 2: %q", i, n, locs)
			}
		}
		br.screenshot("namenode-file")
		var href string
		br.eval(`document.querySelector("#download").href`, &href)
		resp, err := http.Get(href)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Equal(got, data) {
			t.Errorf("download through WebHDFS: %d bytes, want the file's %d", len(got), len(data))
		}

		// Without JavaScript the listing is all there.
		br.run("scripts off", emulation.SetScriptExecutionDisabled(true))
		br.open(dir)
		noJS := br.text("#listing")
		br.run("scripts on", emulation.SetScriptExecutionDisabled(false))
		if !strings.Contains(noJS, "data.bin") {
			t.Errorf("listing without JavaScript:\n%s", noJS)
		}

		// mkdir, upload and delete through the page.
		br.open(dir)
		br.run("mkdir", chromedp.SendKeys("#mkdirname", "made-in-browser", chromedp.ByQuery), chromedp.Click("#mkdirform button", chromedp.ByQuery))
		br.waitListing(t, "made-in-browser", true)
		if st, err := cl.Stat(ctx, "/user/web/made-in-browser"); err != nil || !st.IsDir {
			t.Errorf("mkdir through the page: %v, %v", st, err)
		}
		up := filepath.Join(t.TempDir(), "uploaded.txt")
		content := []byte(strings.Repeat("uploaded through the browse page\n", 1000))
		os.WriteFile(up, content, 0o644)
		br.run("upload", chromedp.SetUploadFiles("#uploadfile", []string{up}, chromedp.ByQuery), chromedp.Click("#uploadform button", chromedp.ByQuery))
		br.waitListing(t, "uploaded.txt", true)
		if got, err := readAll(ctx, cl, "/user/web/uploaded.txt"); err != nil || !bytes.Equal(got, content) {
			t.Errorf("uploaded file in HDFS: %d bytes (%v), want %d", len(got), err, len(content))
		}
		br.screenshot("namenode-browse")
		br.checkLinks("browse")
		br.run("delete", chromedp.Click(`button[data-delete="/user/web/made-in-browser"]`, chromedp.ByQuery))
		br.waitListing(t, "made-in-browser", false)
		if _, err := cl.Stat(ctx, "/user/web/made-in-browser"); err == nil {
			t.Errorf("deleted directory still in HDFS")
		}
		// Another user may not write here: the page says why.
		br.open(nn + "/explorer?path=/user/web&user.name=mallory")
		br.run("mkdir as mallory", chromedp.SendKeys("#mkdirname", "nope", chromedp.ByQuery), chromedp.Click("#mkdirform button", chromedp.ByQuery),
			chromedp.WaitVisible("#message.bad", chromedp.ByQuery))
		if s := br.text("#message"); !strings.Contains(s, "Permission denied") {
			t.Errorf("mkdir as mallory: %q", s)
		}
		br.drop("403 (Forbidden)") // the refused MKDIRS, as the browser reports it
		br.check("mkdir as mallory")

		br.open(nn + "/fsckui?path=/user&files=1&blocks=1&user.name=" + su)
		if s := br.text("#fsckstatus"); s != "HEALTHY" {
			t.Errorf("fsck: %q\n%s", s, br.text("#fsck"))
		}
		br.screenshot("namenode-fsck")
	})

	t.Run("DataNode", func(t *testing.T) {
		br.t = t
		br.open("http://" + m.DataNodeHTTPAddr(0) + "/")
		vols := br.text("#volumes")
		if !strings.Contains(vols, "SSD") || !strings.Contains(vols, "DISK") {
			t.Errorf("datanode volumes:\n%s", vols)
		}
		if n, _ := strconv.Atoi(br.text("#blockcount")); n < 1 {
			t.Errorf("datanode 0 shows %d blocks; it holds replicas of data.bin", n)
		}
		br.screenshot("datanode")
	})

	t.Run("JobTracker", func(t *testing.T) {
		br.t = t
		jt := "http://" + jtHTTP
		br.until(jt+"/", "two trackers", 20*time.Second, func() bool { return br.text("#trackers") == "2" })
		in, outDir := filepath.Join(t.TempDir(), "in"), filepath.Join(t.TempDir(), "out")
		writeLines(t, in, "web", 200)
		out, done, id := startJob(t, m, su, "streaming", "-input", "file://"+in, "-output", "file://"+outDir,
			"-mapper", "sleep 3; cat", "-reducer", "cat", "-numReduceTasks", "1")
		job := jt + "/jobdetails?user.name=" + url.QueryEscape(su) + "&jobid=" + id // ACLs are on: the owner's pages
		// Both trackers run maps; kill one while its attempts run.
		var victim string
		br.until(job, "maps running on both trackers", 20*time.Second, func() bool {
			var trackers []string
			br.eval(`Array.from(document.querySelectorAll("h2#maps + table tbody tr")).filter(r => r.cells[2] && r.cells[2].innerText == "RUNNING").map(r => r.cells[3].innerText)`, &trackers)
			distinct := map[string]bool{}
			for _, tr := range trackers {
				distinct[tr] = true
			}
			if len(distinct) < 2 {
				return false
			}
			victim = trackers[len(trackers)-1]
			return true
		})
		mapsBefore := br.text("#mapprogress")
		m.KillTaskTracker(trackerIndex(t, m, victim))
		br.screenshot("jobtracker-job-running")
		br.open(jt + "/")
		// Each tracker has 2 map and 2 reduce slots (Hadoop's default
		// maxima): the totals are exactly twice the trackers listed, with
		// the job's maps (at most 2 per tracker) in use.
		trackers, _ := strconv.Atoi(br.text("#trackers"))
		slots := regexp.MustCompile(`^(\d+) of (\d+)$`)
		for _, sel := range []string{"#mapslots", "#reduceslots"} {
			s := br.text(sel)
			m := slots.FindStringSubmatch(s)
			if m == nil {
				t.Errorf("%s: %q", sel, s)
				continue
			}
			used, total := atoi(m[1]), atoi(m[2])
			if total != 2*trackers || used > total || (sel == "#mapslots" && used < 1) {
				t.Errorf("%s with %d trackers while the job's maps run: %q", sel, trackers, s)
			}
		}
		br.screenshot("jobtracker")
		br.until(job, "the killed tracker's attempts failed", 20*time.Second, func() bool {
			var lost []string
			br.eval(`Array.from(document.querySelectorAll("tr[data-attempt]")).filter(r => r.cells[2].innerText == "FAILED" && r.cells[7].innerText.includes("Lost task tracker")).map(r => r.cells[3].innerText)`, &lost)
			for _, l := range lost {
				if l != victim {
					t.Errorf("attempt of %s failed as lost; the killed tracker is %s", l, victim)
				}
			}
			return len(lost) > 0
		})
		if err := waitJob(t, out, done); err != nil {
			t.Fatalf("job: %v\n%s", err, out.String())
		}
		br.until(job, "the job succeeded", 20*time.Second, func() bool { return br.text("#jobstate") == "SUCCEEDED" })
		if after := br.text("#mapprogress"); after == mapsBefore || !strings.Contains(after, "100.0%") {
			t.Errorf("map progress did not move: %q, then %q", mapsBefore, after)
		}
		counters := br.text("#counters")
		for _, want := range []string{"File System Counters", "Job Counters", "Map-Reduce Framework", "Map input records"} {
			if !strings.Contains(counters, want) {
				t.Errorf("counters lack %q:\n%s", want, counters)
			}
		}
		var bars int
		br.eval(`document.querySelectorAll("#timeline rect.attempt").length`, &bars)
		if bars < 6 { // 4 maps, the 2 re-run, a reduce, the cleanup
			t.Errorf("timeline has %d attempt bars", bars)
		}
		br.screenshot("jobtracker-job")
		br.run("scroll to the timeline", chromedp.ScrollIntoView("#timeline", chromedp.ByQuery))
		br.screenshot("jobtracker-timeline")
		if s := br.text("#jobsummary"); !regexp.MustCompile(`Failed attempts\s+[1-9]`).MatchString(s) {
			t.Errorf("the lost attempts are not counted as failed:\n%s", s)
		}
		// stderr of an attempt that ran on the surviving tracker.
		var logs []string
		br.eval(`Array.from(document.querySelectorAll("tr[data-attempt]")).filter(r => r.cells[2].innerText == "SUCCEEDED").map(r => r.querySelector("a") ? r.querySelector("a").href : "")`, &logs)
		if len(logs) == 0 || logs[0] == "" {
			t.Fatalf("no stderr link on a succeeded attempt")
		}
		br.open(logs[0])
		br.checkLinks("tasklog")
		br.run("conf", chromedp.Navigate(job), chromedp.WaitReady("#conflink", chromedp.ByQuery), chromedp.Click("#conflink", chromedp.ByQuery), chromedp.WaitVisible("#jobconf", chromedp.ByQuery))
		br.check("job configuration")
		if s := br.text("#jobconf"); !strings.Contains(s, "mapreduce.framework.name") {
			t.Errorf("job configuration:\n%.2000s", s)
		}
		br.open(jt + "/")
		if s := br.text("#completed + table"); !strings.Contains(s, id) {
			t.Errorf("completed jobs lack %s:\n%s", id, s)
		}
		br.checkLinks("jobtracker")
		br.until(jt+"/jobhistory", "the job's history", 20*time.Second, func() bool { return strings.Contains(br.text("#history"), id) })

		// The surviving TaskTracker's page.
		var ttURL string
		br.open(jt + "/")
		br.eval(`document.querySelector("#tasktrackers tbody a").href`, &ttURL)
		br.open(ttURL)
		if s := br.text("#shuffle"); !regexp.MustCompile(`[1-9][0-9]* map output segments`).MatchString(s) {
			t.Errorf("tasktracker's shuffle: %q", s)
		}
		if s := br.text("#localdirs"); !strings.Contains(s, "%") {
			t.Errorf("tasktracker's local dirs:\n%s", s)
		}
		br.screenshot("tasktracker")
	})

	t.Run("Endpoints", func(t *testing.T) {
		for _, base := range []string{nn, "http://" + m.DataNodeHTTPAddr(0), "http://" + jtHTTP} {
			for _, p := range []string{"/jmx", "/metrics", "/stacks", "/static/webui/webui.css"} {
				resp, err := http.Get(base + p)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || len(b) == 0 {
					t.Errorf("%s%s: %s", base, p, resp.Status)
				}
				if p == "/jmx" && !bytes.Contains(b, []byte(`"beans"`)) {
					t.Errorf("%s/jmx: %.300s", base, b)
				}
			}
		}
		resp, err := http.Get(nn + "/jmx?qry=Hadoop:service=NameNode,name=FSNamesystem")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(b, []byte(`"NumLiveDataNodes": 2`)) || bytes.Contains(b, []byte("NameNodeInfo")) {
			t.Errorf("FSNamesystem bean:\n%s", b)
		}
	})

	// Last, as it leaves a DataNode decommissioning: with replication 2
	// on two nodes its blocks have nowhere to go, so it stays in progress.
	t.Run("DecommissionAndSnapshots", func(t *testing.T) {
		br.t = t
		t0 := time.Now()
		victim := m.DataNodeAddr(1)
		if err := os.WriteFile(exclude, []byte(victim+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, errOut, code := m.Run(su, "dfsadmin", "-refreshNodes"); code != 0 {
			t.Fatalf("refreshNodes: exit %d %s%s", code, out, errOut)
		}
		br.open(nn + "/datanodes")
		var states map[string]string
		br.eval(`Object.fromEntries(Array.from(document.querySelectorAll("#datanodes tbody tr")).map(r => [r.cells[0].innerText, r.querySelector("td.admin").innerText]))`, &states)
		inProgress := 0
		for node, st := range states {
			switch {
			case strings.Contains(node, victim) && st == "Decommission In Progress":
				inProgress++
			case !strings.Contains(node, victim) && st != "In Service":
				t.Errorf("%s is %q; only %s was excluded", node, st, victim)
			}
		}
		if inProgress != 1 || len(states) != 2 {
			t.Errorf("admin states on the Datanodes page: %v; want %s Decommission In Progress", states, victim)
		}
		if s := br.text("#decomnodes tbody"); !strings.Contains(s, victim) || !strings.Contains(s, "Decommission In Progress") {
			t.Errorf("decommissioning table:\n%s", s)
		}
		br.screenshot("namenode-datanodes")
		br.open(nn + "/")
		if s := br.text("#decommissioning"); s != "1" {
			t.Errorf("overview's decommissioning nodes: %q", s)
		}
		resp, err := http.Get(nn + "/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo")
		if err != nil {
			t.Fatal(err)
		}
		var info struct {
			Beans []struct{ LiveNodes, DecomNodes string }
		}
		err = json.NewDecoder(resp.Body).Decode(&info)
		resp.Body.Close()
		if err != nil || len(info.Beans) != 1 {
			t.Fatalf("NameNodeInfo: %v, %d beans", err, len(info.Beans))
		}
		var live, decom map[string]struct {
			XferAddr        string `json:"xferaddr"`
			AdminState      string `json:"adminState"`
			UnderReplicated int    `json:"underReplicatedBlocks"`
		}
		json.Unmarshal([]byte(info.Beans[0].LiveNodes), &live)
		json.Unmarshal([]byte(info.Beans[0].DecomNodes), &decom)
		adminOf := map[string]string{}
		for _, n := range live {
			adminOf[n.XferAddr] = n.AdminState
		}
		if adminOf[victim] != "Decommission In Progress" || len(adminOf) != 2 {
			t.Errorf("NameNodeInfo's LiveNodes: admin states %v", adminOf)
		}
		// Every block has a replica on the victim and nowhere else to go.
		if len(decom) != 1 {
			t.Errorf("NameNodeInfo's DecomNodes: %v", decom)
		}
		for _, n := range decom {
			if n.XferAddr != victim || n.UnderReplicated < 3 {
				t.Errorf("NameNodeInfo's DecomNodes: %+v; want %s with data.bin's 3 blocks at least", n, victim)
			}
		}

		// A snapshot: on the Snapshot page, and its file under .snapshot
		// in Browse, where the page offers no change.
		if err := cl.AllowSnapshot(ctx, "/user/web"); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.CreateSnapshot(ctx, "/user/web", "s1"); err != nil {
			t.Fatal(err)
		}
		br.open(nn + "/snapshots")
		if s := br.text("#snapshottable tbody"); !strings.HasPrefix(s, "/user/web\t1\t65536") {
			t.Errorf("snapshottable directories:\n%q", s)
		}
		if s := br.text("#snapshots tbody"); !strings.Contains(s, "s1\t/user/web/.snapshot/s1") {
			t.Errorf("snapshots:\n%q", s)
		}
		br.screenshot("namenode-snapshots")
		br.checkLinks("snapshots")
		br.open(nn + "/explorer?path=/user/web&user.name=" + su)
		br.run("to .snapshot", chromedp.Click("#snapshotlink a", chromedp.ByQuery), chromedp.WaitVisible("#listing", chromedp.ByQuery))
		br.run("to s1", chromedp.Click(`//a[text()="s1"]`, chromedp.BySearch), chromedp.WaitVisible("#readonly", chromedp.ByQuery))
		br.check("browse a snapshot")
		listing := br.text("#listing")
		var tools int
		br.eval(`document.querySelectorAll("#writetools, button[data-delete]").length`, &tools)
		if !strings.Contains(listing, "data.bin") || !strings.Contains(listing, "3.00 MB") || tools != 0 {
			t.Errorf("/user/web/.snapshot/s1: %d change controls; listing:\n%s", tools, listing)
		}
		br.run("click data.bin in s1", chromedp.Click(`//a[text()="data.bin"]`, chromedp.BySearch), chromedp.WaitVisible("#blocks", chromedp.ByQuery))
		br.check("a file in a snapshot")
		var blocks int
		br.eval(`document.querySelectorAll("#blocks tbody tr").length`, &blocks)
		if p := br.text("#fileinfo"); blocks != 3 || !strings.Contains(p, "/user/web/.snapshot/s1/data.bin") {
			t.Errorf("data.bin in s1: %d blocks:\n%s", blocks, p)
		}
		br.screenshot("namenode-snapshot-browse")
		t.Logf("decommission and snapshot checks took %v", time.Since(t0).Round(time.Millisecond))
	})
	t.Logf("web UI test took %v", time.Since(start).Round(time.Millisecond))
}

// waitListing waits for the browse page (reloaded by its script) to list
// name, or no longer to.
func (b *browser) waitListing(t *testing.T, name string, present bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var s string
		err := chromedp.Run(b.ctx, chromedp.Evaluate(`(document.querySelector("#listing") || {innerText: ""}).innerText + (document.querySelector("#message") || {innerText: ""}).innerText`, &s))
		if err == nil && strings.Contains(s, name) == present && !strings.Contains(s, "uploading") {
			b.check("browse after a change")
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("listing with %s present=%v never came:\n%s", name, present, s)
		}
	}
}

// trackerIndex is the index of the TaskTracker process whose name the
// JobTracker shows.
func trackerIndex(t *testing.T, m *testcluster.Processes, name string) int {
	t.Helper()
	for i := 0; i < m.NumTaskTrackers(); i++ {
		if strings.Contains(m.TaskTrackerProcess(i).Log(), "name="+name+" ") {
			return i
		}
	}
	t.Fatalf("no TaskTracker process is %s", name)
	return -1
}

// TestWebUIHA: with a nameservice, each NameNode's overview names its
// state, member id and Raft term; a standby's browse page sends people to
// the active one.
func TestWebUIHA(t *testing.T) {
	br := newBrowser(t)
	m := testcluster.NewProcess(t, testcluster.Config{NameNodes: 3, DataNodes: 1})
	active, ok := m.WaitActive(30*time.Second, -1)
	if !ok {
		t.Fatal("no active NameNode")
	}
	for i := 0; i < m.NumNameNodes(); i++ {
		u := "http://" + m.NameNodeHTTPAddrAt(i)
		want := "standby"
		if i == active {
			want = "active"
		}
		br.until(u+"/", "the overview's HA state", 20*time.Second, func() bool {
			s := br.text("#overview")
			return strings.Contains(s, want+" member "+testcluster.NameNodeID(i)) && regexp.MustCompile(`term [1-9]`).MatchString(s)
		})
		if i == active {
			br.screenshot("namenode-overview-ha")
			continue
		}
		br.open(u + "/explorer?path=/")
		var banner string
		br.eval(`document.querySelector(".banner").innerText`, &banner)
		if !strings.Contains(banner, "standby") {
			t.Errorf("standby %d's browse page: %q", i, banner)
		}
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
