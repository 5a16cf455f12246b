// Package model predicts a MapReduce cluster's job times, cost and
// energy per job from what strata measured of a workload on one machine.
//
// Three steps, each a pure function of its inputs (no sockets, no clock):
//
//   - Calibrate turns one experiment run's accounting (results.json:
//     per-attempt CPU, FILE/HDFS/shuffle counters, per-device bytes,
//     requests and seeks, phase times) into a Workload: each job's demands
//     per byte of its data, and the fitted constants that make the model
//     reproduce the calibration run exactly (each phase's overlap of its
//     resources, each job's fixed overhead).
//   - Predict takes a Workload and a Cluster (nodes, cores and their
//     speed, devices per role with the media model's parameters, link
//     rate, slots, replication, dataset size) and computes each job's
//     phases — waves of maps over the map slots, the shuffle left after the
//     last map, the reduces — from the resource that bounds each one.
//   - Advise predicts a workload on candidate clusters and ranks them by
//     cost per job and by runtime.
//
// Invariants: a Workload's demands are per byte of the job's data, so
// they do not depend on the calibration's size; a Cluster's device model
// is the one internal/media emulates, so a prediction for an emulated
// cluster and its measurement use the same device arithmetic; predicting
// the calibration cluster itself returns the calibration's measured
// phase times (the fit is exact there, and every other prediction is a
// change of demand or capacity from it). docs/MODEL.md has the
// equations and the validation table.
package model
