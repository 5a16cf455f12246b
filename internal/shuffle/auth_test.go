package shuffle

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/jobtoken"
	"github.com/stratafs/strata/internal/spill"
)

// TestServerAuth: a request without UrlHash, with a wrong one, one signed
// with another job's secret, one whose query was changed after signing or
// one for a job without a secret gets 401 with Hadoop's message and no
// data; the 200 of a signed request carries the ReplyHash of its UrlHash.
func TestServerAuth(t *testing.T) {
	job := makeJob(t, spill.None, 1, 2, mixedCounts, 30)
	other := makeJob(t, spill.None, 1, 2, mixedCounts, 31)
	srv := NewServer(ServerConfig{})
	srv.SetSecret(job.id, job.secret)
	srv.SetSecret(other.id, other.secret)
	m := job.maps[0]
	if err := srv.Add(MapOutputInfo{JobID: job.id, AttemptID: m.attempt, Path: m.out.Path, Index: m.out.Index}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	target := hs.URL + Path + "?" + url.Values{"job": {job.id}, "map": {m.attempt}, "reduce": {"1"}}.Encode()
	do := func(req *http.Request) (*http.Response, string) {
		t.Helper()
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	unsigned, _ := http.NewRequest("GET", target, nil)
	wrong, _ := http.NewRequest("GET", target, nil)
	wrong.Header.Set(jobtoken.HeaderURLHash, "AAAA")
	tampered := clientRequest(t, target, job.secret)
	tampered.URL.RawQuery = strings.Replace(tampered.URL.RawQuery, "reduce=1", "reduce=0", 1)
	unknown := clientRequest(t, strings.Replace(target, job.id, "job_test_9999", 1), job.secret)
	for _, tc := range []struct {
		name string
		req  *http.Request
		msg  string
	}{
		{"no hash", unsigned, MsgNoHash},
		{"wrong hash", wrong, MsgBadHash},
		{"other job's secret", clientRequest(t, target, other.secret), MsgBadHash},
		{"changed after signing", tampered, MsgBadHash},
		{"job without a secret", unknown, MsgBadHash},
	} {
		resp, body := do(tc.req)
		if resp.StatusCode != http.StatusUnauthorized || strings.TrimSpace(body) != tc.msg ||
			resp.Header.Get(HeaderMap) != "" || resp.Header.Get(jobtoken.HeaderReplyHash) != "" {
			t.Errorf("%s: %d %q, headers %v", tc.name, resp.StatusCode, body, resp.Header)
		}
	}
	req := clientRequest(t, target, job.secret)
	resp, body := do(req)
	if resp.StatusCode != 200 || int64(len(body)) != m.out.Index[1].PartLength {
		t.Fatalf("signed request: %d, %d bytes", resp.StatusCode, len(body))
	}
	if err := jobtoken.VerifyReply(job.secret, req.Header.Get(jobtoken.HeaderURLHash), resp.Header.Get(jobtoken.HeaderReplyHash)); err != nil {
		t.Errorf("reply hash: %v", err)
	}
	// The server counts a send after its last byte is written, which can
	// be after the client has read it.
	deadline := time.Now().Add(10 * time.Second)
	for st := srv.Stats(); st.Served != 1 && time.Now().Before(deadline); st = srv.Stats() {
		time.Sleep(10 * time.Millisecond)
	}
	if st := srv.Stats(); st.Failed != 5 || st.Served != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestFetchNeedsReplyHash: a server that answers without a valid
// ReplyHash (one that does not know the job's secret) is a failed fetch,
// charged to the map; so is a reducer with the wrong secret (401).
func TestFetchNeedsReplyHash(t *testing.T) {
	job := makeJob(t, spill.None, 1, 1, func(m, p int) int { return 10 }, 32)
	tt := newTracker(t, ServerConfig{})
	locs := serve(t, job, tt)
	tt.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		tt.srv.ServeHTTP(&replyHashDropper{ResponseWriter: w}, r)
		return true
	})
	cfg := testConfig(t, job, 0, nil)
	cfg.Retries = -1
	if it, err := Fetch(context.Background(), cfg, locs); err == nil {
		it.Close()
		t.Fatal("fetch without a reply hash succeeded")
	} else if fe := (*FetchError)(nil); !errors.As(err, &fe) || len(fe.Failed) != 1 || !strings.Contains(err.Error(), "security validation") {
		t.Fatalf("error %v", err)
	}
	tt.setHook(func(http.ResponseWriter, *http.Request) bool { return false })
	cfg = testConfig(t, job, 0, nil)
	cfg.Retries, cfg.Secret = -1, []byte("not the job's secret")
	if it, err := Fetch(context.Background(), cfg, locs); err == nil {
		it.Close()
		t.Fatal("fetch with the wrong secret succeeded")
	} else if !strings.Contains(err.Error(), "401") {
		t.Fatalf("error %v", err)
	}
	cfg.Secret = job.secret
	it, err := Fetch(context.Background(), cfg, locs)
	if err != nil {
		t.Fatal(err)
	}
	if got := drain(t, it, nil); len(got) != 10 {
		t.Fatalf("%d records", len(got))
	}
}

// replyHashDropper removes the ReplyHash header from a response.
type replyHashDropper struct{ http.ResponseWriter }

func (d *replyHashDropper) WriteHeader(code int) {
	d.Header().Del(jobtoken.HeaderReplyHash)
	d.ResponseWriter.WriteHeader(code)
}

func (d *replyHashDropper) Write(p []byte) (int, error) { return d.ResponseWriter.Write(p) }

// FuzzServeRequest: whatever a peer sends as the query and UrlHash, the
// server does not panic and serves data only to a request signed with the
// job's secret.
func FuzzServeRequest(f *testing.F) {
	job := makeJob(f, spill.None, 1, 2, mixedCounts, 33)
	m := job.maps[0]
	srv := NewServer(ServerConfig{})
	srv.SetSecret(job.id, job.secret)
	if err := srv.Add(MapOutputInfo{JobID: job.id, AttemptID: m.attempt, Path: m.out.Path, Index: m.out.Index}); err != nil {
		f.Fatal(err)
	}
	good := url.Values{"job": {job.id}, "map": {m.attempt}, "reduce": {"0"}}.Encode()
	f.Add(good, "", false)
	f.Add(good, "", true)
	f.Add("job="+job.id+"&map="+m.attempt+"&reduce=1&reduce=0", "x", false)
	f.Add("job=%zz&map=;&reduce=99999999999999999999", "====", false)
	f.Fuzz(func(t *testing.T, query, hash string, sign bool) {
		u := &url.URL{Path: Path, RawQuery: query}
		req, err := http.NewRequest("GET", u.String(), nil)
		if err != nil {
			return
		}
		req.Host = "example.com"
		if sign {
			hash = jobtoken.URLHash(job.secret, req.URL)
		}
		req.Header.Set(jobtoken.HeaderURLHash, hash)
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code == 200 && !sign && jobtoken.VerifyURL(job.secret, req.URL, hash) != nil {
			t.Fatalf("served an unsigned request %q with hash %q", query, hash)
		}
	})
}
