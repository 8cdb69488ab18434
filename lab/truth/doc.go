// Package truth scores a crawl's ban handling against what the testbed's
// sites meant: the request log says, per answer, whether a listing was
// empty or a soft ban hid its items, and which IPs a site ever banned;
// the broker's pool stats say which proxies the crawl quarantined. From
// the two come false quarantines and missed soft bans, reported by
// `crawlq demo`, `crawlq bench crawl` and `crawlq bench chaos`.
package truth
