// Package webui is what the daemons' web pages share: one layout
// template, the style sheet and a small script (embedded, so the pages
// need no network), template functions that print sizes, durations and
// usage bars as people read them, and the endpoints every daemon serves
// beside its pages — /jmx in Hadoop's JSON bean format, /stacks, the
// static files and, when enabled, /debug/pprof.
//
// Invariants: pages are rendered on the server and are complete without
// JavaScript; the script only sorts tables and reloads a page on request.
// Nothing a page shows is fetched from another origin. A page is rendered
// into a buffer first, so a template error is a 500, never half a page.
package webui
