// Package bench runs crawlq's benchmarks that are commands rather than Go
// benchmarks: `crawlq bench broker` compares the proxy broker's lease and
// release cycles with the naive broker of the widely copied article and the
// round-trip floor of the same Redis; `crawlq bench crawl` crawls a strict
// testbed site with crawlq and with the article's naive policy
// (naivepolicy), against the pool's physical limit and a no-op Asynq floor,
// and draws the chart.
package bench
