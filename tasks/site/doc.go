// Package site is the registry of the sites crawlq knows: per site its Asynq
// queue, its politeness interval, the proxy class its jobs need, the base
// URLs of its endpoints, and per kind of job ("search", "category",
// "product", "item") how to build a request URL and how to parse a fetched
// body into items.
//
// The per-site packages (tasks/wildberries, tasks/ozon, tasks/avito)
// register themselves in init; import them (blank imports are enough) before
// calling Get or Parse. Defaults can be overridden from YAML with
// ApplyConfig, for instance to point every endpoint at the crawlq testbed.
package site
