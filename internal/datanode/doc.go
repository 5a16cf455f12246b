// Package datanode is the DataNode daemon: it stores block replicas on its
// volumes (package fsdataset), serves HDFS's DataTransferProtocol to
// clients and other DataNodes (reads, pipelined writes, checksums,
// transfers), and keeps the NameNode informed (registration, heartbeats
// with storage reports, full and incremental block reports), carrying out
// the commands it sends back: copy a replica elsewhere, delete replicas,
// register again.
package datanode
