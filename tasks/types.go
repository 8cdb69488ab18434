package tasks

// Task type names, "site:kind".
const (
	TypeWildberriesSearch  = "wildberries:search"
	TypeWildberriesProduct = "wildberries:product"
	TypeOzonSearch         = "ozon:search"
	TypeOzonProduct        = "ozon:product"
	TypeAvitoSearch        = "avito:search"
	TypeAvitoItem          = "avito:item"
	// TypePageFetch is a generic page of a site crawlq does not know.
	TypePageFetch = "page:fetch"
)

// PageQueue is the queue of page:fetch jobs.
const PageQueue = "page"

// KindFetch is the kind of a generic page job.
const KindFetch = "fetch"
