// Package mask is the one rule for printing anything that may hold a
// secret: proxy and gateway URLs, modem change links, webhooks, Redis URLs
// and PostgreSQL connection strings (URL), and free text such as an error
// that may repeat one (Text). Every message, log line, listing and page
// crawlq prints goes through it; docs/operations.md ("What crawlq never
// prints") states the rule.
package mask
