// Package zones holds strata's astronomy applications built on the Zones
// algorithm (Gray, Nieto-Santisteban and Szalay): a sky catalogue
// generator (skygen), neighbour searching (neighbors: every pair of
// objects within θ) and neighbour statistics (neighborstats: the number of
// pairs in each 1″ distance bin up to a maximum), run as MapReduce jobs
// with `strata examples skygen|neighbors|neighborstats`. docs/ZONES.md
// explains how to run them and size their buffers.
//
// # Geometry
//
// Objects are unit vectors; two are neighbours within θ when the squared
// chord between them is below 4·sin²(θ/2) (ChordLimit), which keeps its
// precision at arcsecond scales where a·b > cos θ loses it. The sphere is
// cut into stripes of declination, each cut into equal ranges of right
// ascension (more of them towards the equator): the blocks, numbered from
// the south pole (Geometry). An object's neighbours lie within θ in
// declination and within α(θ, dec) in right ascension (Alpha), and
// anywhere in ra when |dec| + θ > 89.9°.
//
// # Neighbour searching
//
// The map sends every object to its home block and a border copy to every
// block numbered above the home block that has a point within θ of it
// (Geometry.Copies): within θ in dec, within α in ra modulo 360°, so that
// the ra = 0/360 seam is crossed like any other border and a polar object
// is copied round the whole ring. Copies only go forward: of a pair in
// blocks A < B, A's object is copied to B and B's is not copied to A, so
// the pair is found in B only. Each reducer call holds one block (key:
// the block number) and pairs owned objects with each other (each pair
// once) and with the copies, never copies with copies; with the rule
// above, every pair within θ is written exactly once. Blocks are spread
// over the reduce tasks by number modulo their count.
//
// Inside a block the reducer uses zones as sub-blocks (Geometry.Pairs):
// objects sorted by zone of height h (by default θ) and then by ra; each
// owned object is compared with the objects of its own zone and the
// ceil(θ/h) zones either side whose ra lies within the zone's α window —
// a binary search and a short scan, instead of every object of the block.
// Search windows are widened by a relative 10⁻⁹ so that rounding can only
// add candidates; the chord test alone decides, the same test BruteForce
// uses, so the jobs and the O(N²) reference agree to the last bit.
//
// neighborstats runs the same map, and its reducers write each block's
// histogram instead of its pairs (neighborstats-blocks); a second job with
// one reducer and a combiner sums the histograms (neighborstats-sum).
//
// # Block size
//
// A block is held in memory by its reducer, and border copies cost map
// output, so the commands choose the block side from the input size
// (Plan, BlockSide): blocks of about zones.block.objects objects (100,000,
// some 10 MB of reducer memory), at least four per reduce task, and at
// least 16θ on a side. zones.block.height and zones.block.width override
// it. The block a reducer holds is bounded only by the catalogue's density:
// a catalogue with millions of objects inside one block needs smaller
// blocks.
//
// # Formats
//
// The binary catalogue record is 24 bytes: id, ra and dec, big-endian
// (docs/format/sky-catalogue.md); the text form is "id ra dec" lines. Map
// output keys are block numbers (4 bytes big-endian), values a flag byte
// (0 owned, 1 copy) and the object's record.
package zones
