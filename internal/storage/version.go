package storage

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// ParseVersionFile parses a storage directory's VERSION file, as NameNode
// and DataNode storage both write it: key=value lines, lines starting with
// '#' and blank lines ignored, spaces around keys and values trimmed.
func ParseVersionFile(data []byte) (map[string]string, error) {
	kv := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		k, val, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("malformed line %q", line)
		}
		kv[strings.TrimSpace(k)] = strings.TrimSpace(val)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return kv, nil
}
