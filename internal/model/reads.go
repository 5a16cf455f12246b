package model

import (
	"math"
	"math/rand/v2"
)

// A job whose maps open files of their own choosing — TestDFSIO's read,
// whose splits are control files naming the file each map reads — is not
// placed by the scheduler near its data. On a cluster of more nodes than
// replicas a reader often lacks a local replica and reads from a random
// holder of one, and two readers then meet on one node's disk: on an HDD
// their interleaved requests each seek (one nodes-6 repeat's busiest disk
// served two 32 MiB reads with 74 seeks in 77 requests, 1.32 s, where a
// lone reader took 0.41 s). The busiest node's reads are a draw; the
// model takes its median (servedReads, addOwnReads) and prices it on
// the device.

// ownReads reports whether j's maps read HDFS files their splits only
// name (TestDFSIO: a map per file, the rule "fixed").
func (j *Job) ownReads() bool { return j.MapsRule == "fixed" && j.MapHDFSRead > 0.5 }

// servedReads is the distribution of the most reads one node serves at
// once when readers maps, perNode to a node, each read a file of r
// replicas on distinct random nodes of n (Hadoop's default placement on
// one rack; the writer's node among them, itself random): a reader whose
// node holds a replica reads it, any other a random holder's (the
// client's order of equally distant replicas is random). dist[l] is the
// chance that the busiest node serves l reads; local is the share of
// reads served on their readers' nodes. It is a simulation of fixed seed
// — the same figures for the same shape every time — of enough trials
// that the expected maximum is within about 1% (the cost bounded by
// trials × readers × r).
func servedReads(readers, n, perNode, r int) (dist []float64, local float64) {
	if readers <= 0 || n <= 0 {
		return nil, 1
	}
	perNode = max(1, perNode)
	r = min(max(1, r), n)
	readers = min(readers, n*perNode)
	dist = make([]float64, readers+1)
	if r == n {
		// Every node holds every file: each reads its own.
		dist[min(perNode, readers)] = 1
		return dist, 1
	}
	trials := max(200, min(4000, 4_000_000/(readers*r)))
	rnd := rand.New(rand.NewPCG(uint64(readers)<<32|uint64(n), uint64(perNode)<<32|uint64(r)))
	served := make([]int, n)
	holders := make([]int, r)
	var locals int
	for range trials {
		clear(served)
		for i := range readers {
			node := i / perNode // which nodes read does not matter: placement is random
			at := -1
			for k := range holders {
				// r distinct nodes: draw until new (r < n).
				for {
					h := rnd.IntN(n)
					dup := false
					for _, o := range holders[:k] {
						dup = dup || o == h
					}
					if !dup {
						holders[k] = h
						break
					}
				}
				if holders[k] == node {
					at = node
				}
			}
			if at < 0 {
				at = holders[rnd.IntN(r)]
			} else {
				locals++
			}
			served[at]++
		}
		busiest := 0
		for _, c := range served {
			busiest = max(busiest, c)
		}
		dist[busiest]++
	}
	for l := range dist {
		dist[l] /= float64(trials)
	}
	return dist, float64(locals) / float64(trials*readers)
}

// addOwnReads puts the map phase's reads of an ownReads job on the
// busiest node's HDFS volumes: the median outcome l of servedReads (what
// a run most often meets, as a run's time is judged by its median
// repeat, not the mean of a spread that a rare pile-up widens), l reads
// of perRead bytes in each of waves waves, carried by l streams at once
// spread over the volumes, so that an HDD's interleaved streams each
// seek while a lone one keeps its own seeks. It returns the share of
// the reads that are local.
func (L *load) addOwnReads(vols []string, readers, n, perNode, r int, perRead float64, waves int) float64 {
	dist, local := servedReads(readers, n, perNode, r)
	l, cum := 0, 0.0
	for l < len(dist)-1 && cum+dist[l] < 0.5 {
		cum += dist[l]
		l++
	}
	if l == 0 || len(vols) == 0 {
		return local
	}
	nv := float64(len(vols))
	bytes := float64(l) * perRead * float64(waves) / nv
	for _, d := range vols {
		L.parts[d] = append(L.parts[d], part{bytes: bytes, streams: float64(l) / nv, atOnce: math.Max(1, float64(l)/nv)})
	}
	return local
}
