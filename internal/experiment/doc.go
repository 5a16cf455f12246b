// Package experiment reproduces the white papers' question — what does
// flash buy a Hadoop cluster, and where should it go? — on one machine:
// `strata experiment` and `strata tco`.
//
// A storage profile (docs/format/profile.md) names per-node devices, each
// a directory emulated as a media preset (package media: hdd-7200,
// sata-ssd, nvme, ram) or a plain directory, and says which device holds
// the DataNode volumes (with their storage types) and which the
// TaskTracker's mapreduce.cluster.local.dir; it also carries the
// configuration's price and power for the cost tables. The built-in
// profiles are the SanDisk paper's three configurations — all-hdd,
// ssd-intermediate, all-ssd — plus one-ssd (HDFS's ONE_SSD policy) and
// ram-intermediate.
//
// Run builds, for each profile in turn, a fresh embedded cluster
// (package localcluster) of N nodes laid out as the profile says, with
// every node's devices its own (a node's DataNode and its TaskTracker's
// task children contend for the same emulated disk) and the device table
// installed with media.Configure, which the task children inherit. It then
// times TeraGen, TeraSort and TeraValidate (wall time of each job, as the
// paper's runtimes) R times through the embedded JobTracker, and
// optionally the second paper's TestDFSIO sweep (write and read at
// replication 3 and 2 over 1, 3, 6, 12 and 48 files of a fixed total).
//
// The paper's cluster is scaled to the machine: slots keep its ratio of
// one map slot per hardware thread and one reduce slot per two
// (ScaledSlots), and the map-side sort buffer keeps its ratio of data to
// sort memory (ScaledSortMB), so that a sort of hundreds of MB sends its
// intermediate data through on-disk spills and merges as the paper's 1 TB
// sort did. The clusters take free ports and a 200 ms heartbeat.
//
// The results are the paper's tables for what was measured (Results.
// PrintTables): runtimes (Table 4), speed-up over the first profile next
// to the paper's, jobs per day and over the lifetime (Table 5), cost per
// job (Table 7) and energy per job — TCO does that arithmetic, which
// `strata tco` also offers on its own. WriteFiles stores them as
// results.json, CSV files and SVG grouped-bar charts (Chart, a small SVG
// writer of its own).
//
// WriteFiles also writes index.html (report.go): every table and chart
// of the run, a section per profile and links to the raw files, in one
// self-contained page (html/template, embedded CSS and script, inline
// SVG); RegenerateReport writes it again from a results.json. Another
// part of the package adds its tables to it with addReportSections.
//
// Each step is also accounted for (accounting.go, RunResult.Jobs and
// each TestDFSIO run's): the JobTracker's record of every attempt of the
// step's job (node, span, phase ends, the child's rusage, counters by
// Hadoop's names), the daemons' and the task children's CPU time over the
// step, each emulated device's and real disk's I/O, and each
// TaskTracker's intermediate-space peak. With Options.Hosts the daemons
// are processes (hosts.go): each one's CPU time is read from /proc, each
// TaskTracker's intermediate space polled at its /metrics, and each
// host's link's bytes read from the kernel (hosts_accounting.go). The
// tables print the first run's TeraSort; Timeline draws its attempts as
// a Gantt chart by node and slot. The accounting reads counters before
// and after a step, so steps must not overlap.
//
// RunPaper2 (`strata experiment dfsio-paper`, paper2*.go) is the second
// paper's whole run on its SATA and SSD clusters: the TestDFSIO sweep
// (Figures 1–4), TeraGen, TeraSort, TeraValidate, wordcount and a
// shuffle-only job at each replication (Figures 5–6, with Options.
// AfterProfile on each profile's cluster), and one file written through
// put, a FUSE mount and the NFSv3 gateway. Paper2Tables sets the paper's
// stated values (a Go table with their figures) beside strata's.
package experiment
