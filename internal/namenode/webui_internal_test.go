package namenode

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestWebUIPages: the pages render with the namespace's figures, Browse
// lists as user.name (HDFS permissions apply), and the fsck page needs
// the superuser. The browser test (internal/e2e) checks them in Chromium.
func TestWebUIPages(t *testing.T) {
	nn := startTestNameNode(t, nil)
	ns := nn.Namesystem()
	mustOK(t, ns.Mkdirs(as("hdfs"), "/private", 0o700, false))
	mustOK(t, ns.Mkdirs(as("hdfs"), "/public/<i>x", 0o755, true))
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get("http://" + nn.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	for path, want := range map[string][]string{
		"/":                                       {"0 files, 4 directories", `id="live">0<`, "IMAGE_AND_EDITS"},
		"/datanodes":                              {"no live DataNodes"},
		"/startup":                                {"Loading fsimage and edits", "left safe mode"},
		"/explorer?path=/public&user.name=hdfs":   {"&lt;i&gt;x", "drwxr-xr-x", "HOT"},
		"/explorer?path=/private&user.name=bob":   {"Permission denied: user=bob, access=READ_EXECUTE"},
		"/fsckui?path=/&user.name=bob":            {"Access denied for user bob"},
		"/fsckui?path=/&user.name=hdfs":           {"HEALTHY"},
		"/jmx?qry=Hadoop:service=NameNode,name=*": {"NameNodeStatus", `"State": "active"`, "FSNamesystem", "NameNodeInfo"},
		"/stacks":                                 {"goroutine"},
		"/static/webui/webui.css":                 {".bar"},
	} {
		body := get(path)
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s lacks %q:\n%.3000s", path, w, body)
			}
		}
		if strings.Contains(body, "<i>x") {
			t.Errorf("GET %s: a file name is not escaped", path)
		}
	}
	resp, err := http.Get("http://" + nn.HTTPAddr() + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/debug/pprof/ without strata.http.pprof.enabled: %s", resp.Status)
	}
}

// TestWebUIHostileNames: a file's download link escapes each path
// segment, so "?", "#" and "%XX" in a name cannot add a query (an op run
// as another user) or a fragment; fsck's verdict is fsck's, not a
// substring of the report; the fsck page without user.name runs as
// Hadoop's static user, not the superuser.
func TestWebUIHostileNames(t *testing.T) {
	nn := startTestNameNode(t, nil)
	ns := nn.Namesystem()
	mustOK(t, ns.Mkdirs(as("hdfs"), "/d", 0o777, false))
	names := map[string]string{
		"a?op=GETFILESTATUS&user.name=hdfs&x=": "a%3Fop=GETFILESTATUS&amp;user.name=hdfs&amp;x=",
		"b#frag":                               "b%23frag",
		"c%2Fd":                                "c%252Fd",
	}
	for name := range names {
		if _, err := ns.Create(as("alice"), "/d/"+name, CreateOptions{ClientName: "c", Perm: 0o644}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(p string) string {
		t.Helper()
		resp, err := http.Get("http://" + nn.HTTPAddr() + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	for name, want := range names {
		body := get("/explorer?user.name=alice&path=" + url.QueryEscape("/d/"+name))
		link := `href="/webhdfs/v1/d/` + want + `?op=OPEN&amp;user.name=alice"`
		if !strings.Contains(body, link) {
			i := strings.Index(body, `id="download"`)
			t.Errorf("%q: no %s in %.300s", name, link, body[max(i, 0):])
		}
	}
	if body := get("/fsckui?user.name=hdfs&path=" + url.QueryEscape("/none is HEALTHY")); strings.Contains(body, `"ok">HEALTHY`) || !strings.Contains(body, ">FAILED<") {
		t.Errorf("fsck of a missing path named \"is HEALTHY\": %s", body)
	}
	if body := get("/fsckui?path=/"); !strings.Contains(body, "Access denied for user dr.who") {
		t.Errorf("fsck without user.name is not dr.who's: %s", body)
	}
}
