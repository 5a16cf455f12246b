// Package media emulates storage devices on one machine: a directory
// declared as a 7200 rpm SATA disk behaves like one, another as a SATA SSD
// like that, so that a single machine can compare cluster layouts that
// put HDFS volumes and MapReduce intermediate data on different media.
//
// # Configuration
//
// strata.media.dirs lists DIR=PRESET pairs, e.g.
//
//	strata.media.dirs = /data/n1/hdd=hdd-7200,/data/n1/ssd=sata-ssd
//
// where PRESET is a built-in model (Presets): hdd-7200, sata-ssd, nvme or
// ram. strata.media.PRESET.{read.mbps,write.mbps,latency,seek,queue.depth}
// override a preset's parameters, and strata.media.request.bytes (default
// 1 MiB) is the largest request one charge makes. Emulation is off unless
// strata.media.dirs is set; then Default is vfs.Default and Charge
// returns at once.
//
// # A file-system wrapper
//
// Emulation is one implementation of vfs.FS wrapping another: New(inner,
// table) returns an FS whose files under the table's directories pay
// their device, and which is its inner FS everywhere else. The data path
// (DataNode volumes, spill, shuffle, the local job runner) takes an FS
// from its configuration; left nil, it uses Default, the process's table
// over vfs.Default. So a test can stack an errorfs under or over an
// emulated device, or give two components different tables.
//
// Daemons call Configure once at start. It installs the process's table
// (what Default, and the package-level OpenFile, Create, Open, WriteFile
// and Charge, use) and exports it in $STRATA_MEDIA, which child processes
// (task attempts) read on first use.
//
// # Model
//
// Each directory is one device (Params): a request pays Latency, plus Seek
// when it does not continue where the device's previous request ended
// (another file, another offset), in one of QueueDepth service slots, then
// n/bandwidth on the device's single transfer channel. A disk has one slot
// (one actuator); flash has several, so random requests overlap. A caller
// books its request (the slot and channel times it will use) and then
// sleeps until the request completes; callers that arrive while the device
// is busy queue behind each other, whichever process they are in.
//
// The device's state (when each slot and the channel are next free, where
// the previous request ended, counters) is one 4 KiB page shared by every
// process using the directory: the file .strata-media-state in it, mapped
// into memory and updated under a lock word in the page taken by
// compare-and-swap (docs/format/media-state.md). So a DataNode and the
// map and reduce tasks of the same node contend for one disk actuator, as
// on a real node.
//
// # Clock
//
// Emulated time is wall-clock time, and Go's sleeps are coarse (about a
// millisecond at least). A caller therefore runs ahead of its device by up
// to 2 ms before it sleeps, its next request still starting after its
// previous one; and a caller back within 20 ms of its previous request's
// end continues from that end, as a real device's readahead and writeback
// would have kept it busy meanwhile. A stream that keeps its device busy
// gets the model's throughput; one sub-millisecond request does not get
// its exact latency.
//
// # Requests
//
// The kernel turns small application I/O into large requests (readahead,
// writeback clustering); charging the device per application call would
// make a disk absurdly slow when two streams interleave. A File therefore
// charges extents: a read that continues the handle's previous read is
// charged as readahead of up to strata.media.request.bytes beyond it, a
// read elsewhere exactly; writes are gathered into contiguous extents of
// up to strata.media.request.bytes. Charge does the same for bytes moved
// without a File (sendfile).
//
// # What is not modelled
//
// The page cache is not: every byte read or written pays the device, as on
// a cluster whose data far exceeds its memory, even when the machine
// serves it from memory. Nor are file-system allocation (a new file is a
// seek away from the previous one), zoned transfer rates, write caches,
// SSD garbage collection, or the CPU time of real I/O beyond what the
// machine itself spends. Paths are matched lexically (no symlink
// resolution). docs/MEDIA.md has the presets' sources and measurements.
package media
