// Package naivepolicy is the proxy policy of the widely copied article
// (shared/background/proxy-pool-article.txt) as a proxies.Broker, so the
// same crawlq workers, sessions and handlers run on it and `crawlq bench
// crawl` compares the two policies on the same jobs. Benchmarks only.
//
// It is faithful to the article, faults included: get_free_proxy reads the
// whole pool (SMEMBERS), shuffles it and tries 20 candidates with EXISTS
// banned then SET NX EX lock; release_proxy is DEL without a holder check
// (no fencing); mark_banned sets a banned key with EX, deletes the lock and
// removes the proxy from the pool for good (return_to_pool_if_recovered
// never re-adds anything, so it is not run); get_sticky_proxy returns the
// remembered proxy without locking it. There is no per-site interval and a
// proxy is banned only on a status code (403/429) or a transport error.
//
// The article locks a proxy only while one request is in flight, while a
// crawlq lease spans a job's pages. Run it with one-page jobs (product
// pages) and a lease is exactly the article's per-request lock.
package naivepolicy
