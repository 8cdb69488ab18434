// Package results is where crawled items go: a bounded Redis stream
// (crawlq:{jobs}:results), written together with each job's page progress so a
// retried job neither loses nor repeats a page, and read back by
// `crawlq results export` and `crawlq results tail`.
package results
