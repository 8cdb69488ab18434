// Package tasks holds crawlq's Asynq task types, their payloads and
// constructors (NewTask and the per-type NewXxxTask), the handler that runs
// a crawl job through a sticky session, the retry policy derived from ban
// verdicts, the worker that serves the per-site queues, and the enqueuer
// used by the CLI.
//
// Task types follow asynq's convention "site:kind": wildberries:search,
// wildberries:product, ozon:search, ozon:product, avito:search, avito:item,
// and page:fetch for a generic page with user-given selectors. Each site has
// its own queue. A task's ID is derived from its site, kind and canonical
// target, so the same job enqueued twice is refused (and counted) instead
// of run twice.
package tasks
