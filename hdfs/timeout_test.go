package hdfs

import (
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
)

// socketTimeout reads dfs.client.socket-timeout as Hadoop does:
// milliseconds without a unit, 0 meaning no timeout.
func TestSocketTimeoutFromConf(t *testing.T) {
	for _, tc := range []struct {
		val     string
		want    time.Duration
		wantErr bool
	}{
		{"3000", 3 * time.Second, false},
		{"5s", 5 * time.Second, false},
		{"0", -1, false},
		{"-5", 0, true},
		{"soon", 0, true},
	} {
		c := conf.New()
		c.Set("dfs.client.socket-timeout", tc.val)
		got, err := socketTimeout(c, "dfs.client.socket-timeout")
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%q: %v, %v; want %v (error %v)", tc.val, got, err, tc.want, tc.wantErr)
		}
	}
	got, err := socketTimeout(conf.New(), "dfs.client.socket-timeout")
	if err != nil || (got != 0 && got != 60*time.Second) {
		t.Errorf("unset: %v, %v; want the default", got, err)
	}
}
