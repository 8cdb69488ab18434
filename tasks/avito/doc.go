// Package avito knows Avito: URL builders for search and category pages in
// a location and for listing pages, and parsers for the search results,
// the web/1/js/items JSON answer and the listing page. Pages are read
// from the state the server writes into them first (state.go: the
// results page's catalog, the listing page's buyerItem), then from the
// markup (data-marker and itemprop; the seller block of 2025 cards) for
// what the state lacks. Class-name suffixes are CSS-module hashes and are
// never used. It registers the site "avito" in tasks/site.
//
// Avito items never have InStock: a listing has no stock. The pages'
// microdata availability is https://schema.org/LimitedAvailability on
// every listing of the samples alike, so it says nothing and is not read.
package avito
