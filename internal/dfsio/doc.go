// Package dfsio is Hadoop's TestDFSIO, the distributed I/O benchmark, run
// as `strata testdfsio`: it writes, reads, appends to or truncates N files
// of a given size with one MapReduce map task per file, and reports the
// aggregate throughput and the mean and spread of the per-file I/O rates.
//
// The layout is Hadoop's, under the base directory test.build.data
// (default /benchmarks/TestDFSIO) on the default file system:
//
//	<base>/io_control/in_file_test_io_<i>   one KV record per file: test_io_<i> → size (8-byte big-endian)
//	<base>/io_data/test_io_<i>              the data files
//	<base>/io_write, io_read, io_append,    the job output: one part file of
//	  io_random_read, io_truncate           accumulated statistics
//
// Each map task reads its control record, opens its data file (untimed),
// does its I/O with a buffer of -bufferSize bytes, closes the stream, and
// emits Hadoop's statistics records, timed over the I/O plus the close in
// whole milliseconds:
//
//	l:tasks   1
//	l:size    bytes processed
//	l:time    milliseconds
//	f:rate    rate*1000, rate = size/2^20 / (time/1000), as a Java float
//	f:sqrate  rate*rate*1000
//
// One reducer (Hadoop's AccumulatingReducer) sums them by type — l: as
// int64, f: as float32, s: concatenated with ";" — and writes "key\tvalue"
// lines. The client reads them back and prints the report block of
// TestDFSIO.analyzeResult, with Hadoop's float arithmetic and
// DecimalFormat("#.##") rounding (see Report), to stdout and appended to
// the results file.
//
// Differences from Hadoop: a task's time is at least 1 ms (Hadoop's can be
// 0 and then prints an infinite rate); -compression supports gzip only;
// -seq and -erasureCodePolicy are not supported; -storagePolicy is set on
// the io_data directory before the job (Hadoop sets it on each file after
// creating it), with the same effect on where blocks go.
package dfsio
