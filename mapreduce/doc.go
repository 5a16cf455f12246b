// Package mapreduce is strata's MapReduce job API: jobs are Go code — a
// Mapper, a Reducer (and optionally a Combiner and a Partitioner) over byte
// keys and values, reading through an InputFormat and writing through an
// OutputFormat — configured with Hadoop's keys (mapreduce.job.reduces,
// mapreduce.task.io.sort.mb, ...).
//
// A program registers its jobs by name (Register) and calls Main; the
// strata binary does the same for its built-in examples. A job runs in
// process (local mode: mapreduce.framework.name=local, the default) or on a
// JobTracker, which ships the program to TaskTrackers as Hadoop ships a jar.
// There Main also makes the program a task child (`<program> task`); the
// child's protocol is internal (internal/taskrun), and this package
// registers the function that runs an attempt with it.
//
// Keys are compared as bytes (bytes.Compare) unless the job sets a
// comparator; map output is partitioned by hash of the key unless it sets a
// partitioner.
package mapreduce
