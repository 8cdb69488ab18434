// Package wildberries knows Wildberries: URL builders for the search,
// catalog and card APIs, and parsers for their JSON (current sizes[].price
// format and the legacy priceU format) and for the rendered HTML search and
// product pages. It registers the site "wildberries" in tasks/site.
package wildberries
