// Package samples locates the real pages and API answers of Wildberries, Ozon
// and Avito that the tests read (testdata/<site>/, each folder with a README
// saying where its files came from). It is imported by tests, and by the
// testbed for the one page it serves (OzonIncidentPage): the crawlq
// binary carries that page only.
package samples
