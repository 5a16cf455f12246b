package conftest

import (
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
)

type sample struct {
	Replication int64
	BlockSize   int64
}

func goodFrom(c *conf.Configuration) (sample, error) {
	r, err := c.GetInt("dfs.replication")
	if err != nil {
		return sample{}, err
	}
	b, err := c.GetBytes("dfs.blocksize")
	return sample{r, b}, err
}

// recorder collects what a check reports instead of failing the test.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Errorf(f string, args ...any) { r.errs = append(r.errs, f) }
func (r *recorder) Fatalf(f string, args ...any) { r.errs = append(r.errs, f) }
func (r *recorder) failed(substr string) bool {
	for _, e := range r.errs {
		if strings.Contains(e, substr) {
			return true
		}
	}
	return false
}

func TestChecksPass(t *testing.T) {
	CheckDefaults(t, goodFrom, nil, sample{3, 128 << 20})
	CheckMapping(t, goodFrom, nil, map[string]string{"dfs.replication": "2", "dfs.blocksize": "64m"})
}

func TestChecksCatch(t *testing.T) {
	r := &recorder{TB: t}
	CheckDefaults(r, goodFrom, nil, sample{2, 128 << 20})
	if !r.failed("differs from DefaultConfig") {
		t.Errorf("a wrong default went unnoticed: %v", r.errs)
	}

	r = &recorder{TB: t}
	CheckMapping(r, goodFrom, nil, map[string]string{"dfs.replication": "2"})
	if !r.failed("gives no other value") {
		t.Errorf("an unlisted key went unnoticed: %v", r.errs)
	}

	r = &recorder{TB: t}
	ignores := func(c *conf.Configuration) (sample, error) {
		c.Get("dfs.replication") // read, but never used
		return sample{}, nil
	}
	CheckMapping(r, ignores, nil, map[string]string{"dfs.replication": "2"})
	if !r.failed("changes nothing") {
		t.Errorf("a key read but not mapped went unnoticed: %v", r.errs)
	}

	r = &recorder{TB: t}
	unknown := func(c *conf.Configuration) (sample, error) {
		return sample{Replication: int64(len(c.Get("dfs.no.such.key")))}, nil
	}
	CheckMapping(r, unknown, nil, map[string]string{"dfs.no.such.key": "x"})
	if !r.failed("not in conf's known keys") {
		t.Errorf("an unknown key went unnoticed: %v", r.errs)
	}
}
