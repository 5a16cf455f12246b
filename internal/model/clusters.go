package model

import (
	"embed"
	"fmt"
	"os"
	"sort"
	"strings"
)

// builtinFS holds the built-in cluster descriptions: the papers'
// clusters from the hardware they state, and an example.
//
//go:embed clusters/*.cluster
var builtinFS embed.FS

// BuiltinClusters are the built-in cluster names, sorted.
func BuiltinClusters() []string {
	ents, _ := builtinFS.ReadDir("clusters")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".cluster"))
	}
	sort.Strings(out)
	return out
}

// LoadCluster reads the built-in cluster called name or, if name has a
// path separator or ends in .cluster, that file.
func LoadCluster(name string) (*Cluster, error) {
	if strings.ContainsRune(name, os.PathSeparator) || strings.HasSuffix(name, ".cluster") {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		defer f.Close()
		return ParseCluster(f, name)
	}
	f, err := builtinFS.Open("clusters/" + name + ".cluster")
	if err != nil {
		return nil, fmt.Errorf("cluster: no built-in cluster %q (built-in: %s; or give a file path)", name, strings.Join(BuiltinClusters(), ", "))
	}
	defer f.Close()
	return ParseCluster(f, "builtin:"+name)
}
