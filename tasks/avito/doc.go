// Package avito knows Avito: URL builders for search and category pages in
// a location and for listing pages, and parsers for the search results
// (cards by data-marker and itemprop), the listing page (data-marker) and
// the buyerItem JSON of a listing. Class-name suffixes are CSS-module
// hashes and are never used. It registers the site "avito" in tasks/site.
package avito
