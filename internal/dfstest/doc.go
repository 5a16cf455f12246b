// Package dfstest holds the file system's cluster-level tests: a NameNode
// and DataNodes in one process (package testcluster), driven by strata's
// own client and by github.com/colinmarc/hdfs/v2 as an external HDFS
// client, through the real RPC and data transfer paths.
package dfstest
