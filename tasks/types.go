package tasks

// Task types are "site:kind", from the site registry (tasks/site), and:

// TypePageFetch is a generic page of a site crawlq does not know.
const TypePageFetch = "page:fetch"

// PageQueue is the queue of page:fetch jobs.
const PageQueue = "page"

// KindFetch is the kind of a generic page job.
const KindFetch = "fetch"
