// Package ozon knows Ozon: URL builders for search, category and product
// pages, and parsers for the widget states Ozon embeds in its HTML
// (<div id="state-<widget>-…" data-state='<JSON>'>): searchResultsV2 and
// tileGridDesktop tiles on listing pages, webProductHeading, webPrice and
// webReviewProductScore on product pages, with the webCurrentSeller link
// and JSON-LD as fallbacks; InStock is the JSON-LD offer's availability,
// on product pages only. It never selects by the generated class names.
// It registers the site "ozon" in tasks/site.
package ozon
