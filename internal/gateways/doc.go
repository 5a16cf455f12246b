// Package gateways holds the tests that take strata's three gateways to
// HDFS together — the FUSE mount (internal/fusefs), the NFSv3 gateway
// (internal/nfsgw) and WebHDFS on the NameNode and DataNode HTTP ports —
// on one in-process cluster, next to strata's own HDFS client and
// github.com/colinmarc/hdfs: what one writes, every other reads
// byte-identical; a tree one makes, every other lists the same; each
// enforces HDFS permissions for the user acting through it; and the
// write-once refusals of FUSE and NFS leave files as they were for all
// the others. The package has no code of its own.
package gateways
