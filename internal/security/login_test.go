package security

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jcmturner/gokrb5/v8/config"
)

// TestEmptyCredentialCache: an empty or truncated cache (gokrb5 would
// index it out of bounds) says to kinit.
func TestEmptyCredentialCache(t *testing.T) {
	dir := t.TempDir()
	for name, b := range map[string][]byte{"empty": nil, "truncated": {5, 4, 0}} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoginFromCCacheFile(config.New(), p, nil)
		if err == nil || !strings.Contains(err.Error(), "no Kerberos credentials") || name == "empty" && !strings.Contains(err.Error(), "no Kerberos credentials: run kinit") {
			t.Fatalf("%s cache: %v", name, err)
		}
	}
}

// TestKeytabModeWarning: a keytab others may read is logged.
func TestKeytabModeWarning(t *testing.T) {
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(old)
	p := filepath.Join(t.TempDir(), "kt")
	os.WriteFile(p, []byte{5, 2}, 0o600)
	warnKeytabMode(p)
	if logs.Len() != 0 {
		t.Fatalf("0600 keytab logged: %s", logs.String())
	}
	os.Chmod(p, 0o644)
	warnKeytabMode(p)
	if !strings.Contains(logs.String(), "readable by its group or others") {
		t.Fatalf("0644 keytab not logged: %q", logs.String())
	}
}
