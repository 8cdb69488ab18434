// Package avito knows Avito: URL builders for search and category pages in
// a location and for listing pages, and parsers for the search results
// (cards by data-marker and itemprop, with the seller block of 2025
// cards), the web/1/js/items JSON answer, and the listing page
// (data-marker). Class-name suffixes are CSS-module
// hashes and are never used. It registers the site "avito" in tasks/site.
//
// Avito items never have InStock: a listing has no stock. The pages'
// microdata availability is https://schema.org/LimitedAvailability on
// every listing of the samples alike, so it says nothing and is not read.
package avito
