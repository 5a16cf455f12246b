package conf

import (
	"fmt"
	"regexp"
)

// KeySensitiveConfigKeys lists the regular expressions of the settings a
// page must not show (Hadoop's hadoop.security.sensitive-config-keys).
const KeySensitiveConfigKeys = "hadoop.security.sensitive-config-keys"

// Redacted is what a page shows for a sensitive setting's value.
const Redacted = "<redacted>"

// Redactor hides sensitive settings' values, as Hadoop's ConfigRedactor:
// a key is sensitive when any pattern matches anywhere in it.
type Redactor struct{ patterns []*regexp.Regexp }

// NewRedactor compiles c's hadoop.security.sensitive-config-keys (the
// table's default when unset).
func NewRedactor(c *Configuration) (*Redactor, error) {
	r := &Redactor{}
	for _, p := range c.GetStrings(KeySensitiveConfigKeys) {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", KeySensitiveConfigKeys, p, err)
		}
		r.patterns = append(r.patterns, re)
	}
	return r, nil
}

// Sensitive says whether key's value must be hidden.
func (r *Redactor) Sensitive(key string) bool {
	for _, p := range r.patterns {
		if p.MatchString(key) {
			return true
		}
	}
	return false
}

// Redact is value, or Redacted for a sensitive key.
func (r *Redactor) Redact(key, value string) string {
	if r.Sensitive(key) {
		return Redacted
	}
	return value
}
