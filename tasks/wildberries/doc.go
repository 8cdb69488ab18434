// Package wildberries knows Wildberries: URL builders for the search,
// catalog and card APIs, and parsers for their JSON (current sizes[].price
// format and the legacy priceU format) and for the rendered HTML search and
// product pages. Items have InStock where the JSON gives a stock
// (totalQuantity, sizes[].stocks[].qty); the legacy catalog, the basket
// card.json and the HTML pages do not. It registers the site
// "wildberries" in tasks/site.
package wildberries
