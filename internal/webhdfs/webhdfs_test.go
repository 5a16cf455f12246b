package webhdfs

import (
	"fmt"
	"github.com/stratafs/strata/internal/delegation"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/ipc"
)

func parse(t *testing.T, target string) (*Request, error) {
	t.Helper()
	return Parse(httptest.NewRequest(http.MethodGet, target, nil))
}

func TestParse(t *testing.T) {
	r, err := parse(t, "/webhdfs/v1/a/b/?OP=liststatus&User.Name=alice&startAfter=x&startafter=y")
	if err != nil {
		t.Fatal(err)
	}
	if r.Op != "LISTSTATUS" || r.Path != "/a/b" || r.User != "alice" || r.String("startafter") != "x" {
		t.Errorf("parsed %+v", r)
	}
	if r, err := parse(t, "/webhdfs/v1?op=GETHOMEDIRECTORY"); err != nil || r.Path != "/" || r.User != DefaultUser {
		t.Errorf("root without user: %+v %v", r, err)
	}
	for target, class := range map[string]string{
		"/webhdfs/v1/a":                                                 ClassJavaIllegalArgument, // no op
		"/webhdfs/v1x?op=OPEN":                                          ClassJavaIllegalArgument,
		"/webhdfs/v1/a?op=OPEN&user.name=a%20b":                         ClassJavaIllegalArgument,
		"/webhdfs/v1/a?op=OPEN&user.name=x&doas=root":                   ClassAuthorization,
		"/webhdfs/v1/a?op=OPEN&delegation=abc":                          delegation.ClassInvalidToken,
		"/webhdfs/v1/a?op=OPEN&user.name=bob&delegation=" + aliceToken:  ipc.ClassIOException,
		"/webhdfs/v1/a?op=OPEN&x=" + strings.Repeat("a", maxParamLen+1): ClassJavaIllegalArgument,
		"/webhdfs/v1/a?op=RENAME&destination=/b%ff":                     ClassJavaIllegalArgument,
		// Components that only percent-encoding gets past the HTTP
		// server's path cleaning, and names that are not UTF-8.
		"/webhdfs/v1/a%2F..%2Fb?op=OPEN": ipc.ClassInvalidPath,
		"/webhdfs/v1/%2E%2E/b?op=OPEN":   ipc.ClassInvalidPath,
		"/webhdfs/v1/a/%2E?op=OPEN":      ipc.ClassInvalidPath,
		"/webhdfs/v1/a%2F%2Fb?op=OPEN":   ipc.ClassInvalidPath,
		"/webhdfs/v1/a%ff?op=OPEN":       ipc.ClassInvalidPath,
	} {
		if _, err := parse(t, target); ipc.ClassOf(err) != class {
			t.Errorf("%.60s: %v, want %s", target, err, class)
		}
	}
}

// aliceToken is a delegation= value for a token alice owns.
var aliceToken = delegation.Token{Identifier: delegation.Identifier{Owner: "alice", Renewer: "alice"}.Bytes(), Kind: delegation.Kind}.EncodeToURLString()

func TestParseDelegation(t *testing.T) {
	r, err := parse(t, "/webhdfs/v1/a?op=LISTSTATUS&user.name=alice&delegation="+aliceToken)
	if err != nil || r.User != "alice" || r.Delegation == nil {
		t.Fatalf("%+v %v", r, err)
	}
	// Without user.name the token names the user.
	if r, err := parse(t, "/webhdfs/v1/a?op=LISTSTATUS&delegation="+aliceToken); err != nil || r.User != "alice" {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestParams(t *testing.T) {
	r, err := parse(t, "/webhdfs/v1/a?op=CREATE&overwrite=TRUE&permission=1777&blocksize=1048576&replication=3&destination=/x")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := r.CreateParams()
	if err != nil || cp != (CreateParams{Overwrite: true, Perm: 0o1777, BlockSize: 1 << 20, Replication: 3}) {
		t.Errorf("CreateParams %+v %v", cp, err)
	}
	if d, err := r.Absolute("destination"); d != "/x" || err != nil {
		t.Errorf("destination %q %v", d, err)
	}
	if r, _ := parse(t, "/webhdfs/v1/a?op=CREATE"); r != nil {
		if cp, err := r.CreateParams(); err != nil || cp.Perm != 0o644 || cp.Overwrite {
			t.Errorf("CREATE defaults %+v %v", cp, err)
		}
	}
	for _, q := range []string{"permission=2000", "permission=8", "permission=-1", "overwrite=yes", "blocksize=0", "replication=40000", "buffersize=x"} {
		r, err := parse(t, "/webhdfs/v1/a?op=CREATE&"+q)
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.CreateParams()
		if ipc.ClassOf(err) != ClassJavaIllegalArgument || !strings.HasPrefix(ipc.ClassOf(err), "java.lang") {
			t.Errorf("%s: %v, want IllegalArgumentException", q, err)
		}
	}
}

func TestExceptionStatus(t *testing.T) {
	for _, tc := range []struct {
		err    error
		simple string
		status int
	}{
		{ipc.Errorf(ipc.ClassFileNotFound, "File does not exist: /a"), "FileNotFoundException", 404},
		{ipc.Errorf(ipc.ClassAccessControl, "Permission denied"), "AccessControlException", 403},
		{ipc.Errorf(ipc.ClassFileAlreadyExists, "exists"), "FileAlreadyExistsException", 403},
		{ipc.Errorf(ipc.ClassSafeMode, "safe"), "SafeModeException", 403},
		{ipc.Errorf(ipc.ClassIllegalArgument, "bad"), "HadoopIllegalArgumentException", 400},
		{ipc.Errorf(ipc.ClassPathComponentTooLong, "long"), "PathComponentTooLongException", 403},
		{ipc.Errorf(ClassSecurity, "no"), "SecurityException", 401},
		{fmt.Errorf("stat /a: %w", os.ErrNotExist), "FileNotFoundException", 404},
		{&url.Error{Op: "Get", URL: "x", Err: os.ErrDeadlineExceeded}, "IOException", 403},
	} {
		e := Exception(tc.err)
		if e.Exception != tc.simple || StatusOf(e.JavaClassName) != tc.status || e.Message == "" {
			t.Errorf("%v: %+v status %d, want %s %d", tc.err, e, StatusOf(e.JavaClassName), tc.simple, tc.status)
		}
	}
}

func TestDataNodeURL(t *testing.T) {
	r, err := parse(t, "/webhdfs/v1/dir/a%20b?op=open&offset=5&noredirect=true")
	if err != nil {
		t.Fatal(err)
	}
	got := DataNodeURL("10.0.0.1:9864", r, "10.0.0.9:8020")
	u, err := url.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Host != "10.0.0.1:9864" || u.Path != "/webhdfs/v1/dir/a b" || q.Get("op") != "OPEN" || q.Get("offset") != "5" ||
		q.Get("user.name") != DefaultUser || q.Get("namenoderpcaddress") != "10.0.0.9:8020" || q.Has("noredirect") {
		t.Errorf("DataNodeURL %s", got)
	}
}

// A path the NameNode accepts reaches the DataNode unchanged through the
// redirect URL, past the HTTP server's path cleaning.
func TestRedirectKeepsPath(t *testing.T) {
	var got string
	mux := http.NewServeMux()
	mux.Handle(Prefix+"/", Handler(map[string]Op{"GET OPEN": func(w http.ResponseWriter, hr *http.Request, r *Request) error {
		got = r.Path
		WriteEmpty(w, http.StatusOK)
		return nil
	}}))
	for _, p := range []string{"/", "/a", "/dir/a%20b", "/a%3Fb%23c", "/%25", "/a;b=c", "/caf%C3%A9", "/a%2F..%2Fb", "/a%2F%2Fb", "/%2E%2E/b", "/a/%2E"} {
		r, err := parse(t, "/webhdfs/v1"+p+"?op=OPEN")
		if err != nil {
			if ipc.ClassOf(err) != ipc.ClassInvalidPath {
				t.Errorf("%s: %v", p, err)
			}
			continue
		}
		got = ""
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, DataNodeURL("10.0.0.1:9864", r, "10.0.0.9:8020"), nil))
		if rec.Code != http.StatusOK || got != r.Path {
			t.Errorf("%s: the DataNode got %d, path %q; want 200, %q", p, rec.Code, got, r.Path)
		}
	}
}

// FuzzParse checks that no request line makes Parse panic, and that what
// it accepts is well formed.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"/webhdfs/v1/a?op=OPEN", "/webhdfs/v1?op=x&user.name=%zz", "/webhdfs/v1/%2e%2e/?OP=a&op=b&doas=", "/webhdfs/v1/a?op=CREATE&permission=1777&replication=-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return
		}
		r, err := Parse(&http.Request{Method: http.MethodGet, URL: u})
		if err != nil {
			if Exception(err).JavaClassName == "" {
				t.Fatalf("error without a class: %v", err)
			}
			return
		}
		if r.Op == "" || !strings.HasPrefix(r.Path, "/") || r.User == "" {
			t.Fatalf("accepted %q as %+v", target, r)
		}
		r.CreateParams()
	})
}

// TestParseAuthenticatedUser: behind the authentication filter in secure
// mode the request's user is the authenticated one; user.name is ignored
// and doas is impersonation of it.
func TestParseAuthenticatedUser(t *testing.T) {
	req := func(target string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		return r.WithContext(httpauth.WithIdentity(r.Context(), httpauth.Identity{User: "alice", Principal: "alice@R", Type: httpauth.TypeKerberos}))
	}
	r, err := Parse(req("/webhdfs/v1/a?op=OPEN&user.name=hdfs"))
	if err != nil || r.User != "alice" {
		t.Fatalf("user %+v %v, want alice", r, err)
	}
	if _, err := Parse(req("/webhdfs/v1/a?op=OPEN&doas=hdfs")); ipc.ClassOf(err) != ClassAuthorization || !strings.Contains(err.Error(), "User: alice is not allowed to impersonate hdfs") {
		t.Fatalf("doas: %v", err)
	}
}
