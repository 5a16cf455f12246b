package webui

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	stratafs "github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/httpauth"
)

//go:embed static
var static embed.FS

// StaticPrefix is where the style sheet and script are served.
const StaticPrefix = "/static/webui/"

// Link is an entry of a page's navigation bar.
type Link struct{ Name, Href string }

// Page is what the layout needs around a page's content.
type Page struct {
	// Daemon names the process in the header ("NameNode 127.0.0.1:8020").
	Daemon string
	// Title is the page's heading and the tab's title.
	Title string
	// Nav is the daemon's navigation bar; the entry whose Href is Active
	// is highlighted.
	Nav    []Link
	Active string
	// Refresh, when positive, offers reloading the page every that many
	// seconds (off until the user ticks the box; remembered per page).
	Refresh int
	// Data is the page's own template data (.Data in the content).
	Data any
	// Now is when the page was rendered.
	Now time.Time
	// Status is the response's status (0: 200).
	Status int
}

const layout = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · {{.Daemon}}</title>
<link rel="stylesheet" href="` + StaticPrefix + `webui.css">
<link rel="icon" href="data:,">
<script src="` + StaticPrefix + `webui.js" defer></script>
</head><body>
<header><span class="brand">strata · {{.Daemon}}</span>
<nav>{{range .Nav}}<a href="{{.Href}}"{{if eq .Href $.Active}} class="active"{{end}}>{{.Name}}</a>{{end}}</nav>
{{if gt .Refresh 0}}<label class="refresh"><input type="checkbox" id="autorefresh" data-seconds="{{.Refresh}}"> refresh every {{.Refresh}} s</label>{{end}}
</header>
<main>
<h1>{{.Title}}</h1>
{{template "content" .Data}}
</main>
<footer>rendered {{.Now.Format "2006-01-02 15:04:05 MST"}} · <a href="/jmx">jmx</a> · <a href="/metrics">metrics</a> · <a href="/stacks">stacks</a></footer>
</body></html>
`

// Parse returns the layout with content, which must define the template
// "content" (executed with Page.Data), and the package's functions.
// It panics on a template error: pages are parsed at start-up.
func Parse(content string, funcs template.FuncMap) *template.Template {
	t := template.New("layout").Funcs(Funcs())
	if funcs != nil {
		t = t.Funcs(funcs)
	}
	return template.Must(template.Must(t.Parse(layout)).Parse(content))
}

// Render executes t for p into a buffer and writes it, or a 500 with the
// error when the template fails.
func Render(w http.ResponseWriter, t *template.Template, p Page) {
	if p.Now.IsZero() {
		p.Now = time.Now()
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, p); err != nil {
		http.Error(w, "rendering "+p.Title+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if p.Status != 0 {
		w.WriteHeader(p.Status)
	}
	w.Write(buf.Bytes())
}

// StaticUser is the user of a page request that names none, Hadoop's
// hadoop.http.staticuser.user default.
const StaticUser = "dr.who"

// userCookie keeps the user a page named for the pages that follow it,
// as Hadoop's authentication filter keeps it in its hadoop.auth cookie.
const userCookie = "strata.user"

// RemoteUser is a page request's user as Hadoop's simple authentication
// for web UIs finds it: the user.name parameter (trusted, as simple
// authentication trusts it; remembered in a cookie for the links the page
// leads to), else the cookie's, else StaticUser. A name longer than 256
// bytes or with control characters counts as none.
//
// In secure mode (hadoop.http.authentication.type=kerberos) the user is
// the one the authentication filter authenticated; user.name is ignored.
func RemoteUser(w http.ResponseWriter, r *http.Request) string {
	if u, ok := httpauth.User(r.Context()); ok {
		return u
	}
	if u := r.URL.Query().Get("user.name"); validUser(u) {
		http.SetCookie(w, &http.Cookie{Name: userCookie, Value: url.QueryEscape(u), Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		return u
	}
	if c, err := r.Cookie(userCookie); err == nil {
		if u, err := url.QueryUnescape(c.Value); err == nil && validUser(u) {
			return u
		}
	}
	return StaticUser
}

// ParamUser is the user a request names for itself: the user the
// authentication filter authenticated, else the user.name parameter
// (which simple authentication trusts), else "".
func ParamUser(r *http.Request) string {
	if u, ok := httpauth.User(r.Context()); ok {
		return u
	}
	return r.URL.Query().Get("user.name")
}

func validUser(u string) bool {
	if u == "" || len(u) > 256 {
		return false
	}
	for _, c := range u {
		if c < ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

// Static serves the embedded style sheet and script under StaticPrefix.
func Static() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	return http.StripPrefix(StaticPrefix, http.FileServerFS(sub))
}

// Funcs are the template functions every page may use.
func Funcs() template.FuncMap {
	return template.FuncMap{
		"bytes":    Bytes,
		"dur":      Duration,
		"since":    Since,
		"millis":   Millis,
		"ts":       Timestamp,
		"pct":      Percent,
		"bar":      Bar,
		"usage":    Usage,
		"progress": Progress,
		"perm":     Permission,
		"add":      func(a, b int) int { return a + b },
		"join":     strings.Join,
	}
}

// Bytes prints n bytes as Hadoop's UI does: binary units with two
// decimals ("1.50 GB"), bytes below 1 KB ("512 B").
func Bytes(n int64) string {
	if n < 0 {
		return "-" + Bytes(-n)
	}
	units := []string{"B", "KB", "MB", "GB", "TB", "PB", "EB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatInt(n, 10) + " B"
	}
	return fmt.Sprintf("%.2f %s", v, units[i])
}

// Duration prints d to the precision a person wants: "350 ms", "12.3 s",
// "4m 05s", "2h 03m", "3d 04h".
func Duration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// Since is Duration of the time from t to now, "never" for a zero t.
func Since(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return Duration(time.Since(t)) + " ago"
}

// Millis is the time of a Unix timestamp in milliseconds.
func Millis(ms int64) time.Time { return time.UnixMilli(ms) }

// Timestamp prints t as Hadoop's pages do ("2026-12-01 14:03:05"), "-"
// for a zero t.
func Timestamp(t time.Time) string {
	if t.IsZero() || t.Unix() == 0 {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// Percent is part of whole in percent with one decimal ("37.5%"), "-"
// when whole is 0.
func Percent(part, whole int64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

// Bar is a usage bar of used out of total with the percentage beside it;
// it turns amber above 75% and red above 90%.
func Bar(used, total int64) template.HTML {
	f := 0.0
	if total > 0 {
		f = math.Min(1, math.Max(0, float64(used)/float64(total)))
	}
	class := "bar"
	switch {
	case f > 0.9:
		class += " full"
	case f > 0.75:
		class += " high"
	}
	return template.HTML(fmt.Sprintf(`<span class="%s" title="%s of %s"><span style="width:%.1f%%"></span></span><span class="barlabel">%s</span>`,
		class, template.HTMLEscapeString(Bytes(used)), template.HTMLEscapeString(Bytes(total)), 100*f, Percent(used, total)))
}

// Usage is a volume's use as Hadoop's Datanodes page draws it: DFS used
// (dark) and other use of the disk (light) out of capacity, remaining
// the rest, labelled with the DFS and total shares.
func Usage(dfsUsed, remaining, capacity int64) template.HTML {
	if capacity <= 0 {
		return template.HTML(`<span class="bar"></span><span class="barlabel">-</span>`)
	}
	other := max(capacity-remaining-dfsUsed, 0)
	f := func(n int64) float64 { return math.Min(100, math.Max(0, 100*float64(n)/float64(capacity))) }
	class := "bar stacked"
	if used := f(dfsUsed + other); used > 90 {
		class += " full"
	} else if used > 75 {
		class += " high"
	}
	return template.HTML(fmt.Sprintf(`<span class="%s" title="DFS used %s, other use %s, remaining %s of %s"><span style="width:%.1f%%"></span><span class="other" style="width:%.1f%%"></span></span><span class="barlabel">%s DFS, %s used</span>`,
		class, Bytes(dfsUsed), Bytes(other), Bytes(remaining), Bytes(capacity), f(dfsUsed), f(other), Percent(dfsUsed, capacity), Percent(dfsUsed+other, capacity)))
}

// Progress is a progress bar of done out of total (tasks, say), with the
// percentage as its label.
func Progress(done, total int) template.HTML {
	f := 0.0
	if total > 0 {
		f = math.Min(1, float64(done)/float64(total))
	} else {
		f = 1
	}
	return template.HTML(fmt.Sprintf(`<span class="bar" role="progressbar" aria-valuenow="%.0f"><span style="width:%.1f%%"></span></span><span class="barlabel">%.1f%%</span>`,
		100*f, 100*f, 100*f))
}

// Permission prints an HDFS mode as ls does: "drwxr-xr-x", with t/T for
// the sticky bit.
func Permission(dir bool, mode uint16) string { return stratafs.ModeString(dir, mode) }
