package tasks

import (
	"errors"
	"time"

	"crawlq/detect"
	"crawlq/tasks/site"
)

// Recognizer is the detector's check that a product (or item) page
// judged OK holds its item (issue 36.6): the site's parser must find one.
// A page the parser does not recognize, or recognizes with no item, is
// an unknown shape, Suspect: asked again from a second proxy, then
// failed with the answer kept (unknownShape), never stored as a page
// without items. A redirect stub passes: the job follows it. Listings,
// a site without a parser and other parser errors pass too: the job's
// own parse acts on them as before.
func Recognizer(sites *site.Registry) detect.Recognizer {
	return func(name, kind string, body []byte, finalURL string) error {
		if sites == nil || detect.NormalizeKind(kind) != "product" {
			return nil
		}
		s, err := sites.Get(name)
		if err != nil {
			return nil
		}
		if _, err := s.Kind(kind); err != nil {
			return nil
		}
		p, err := s.Parse(kind, body, finalURL, time.Time{})
		var stub *site.RedirectError
		switch {
		case errors.As(err, &stub):
			return nil
		case errors.Is(err, site.ErrUnrecognized):
			return err
		case err == nil && len(p.Items) == 0:
			return site.Unrecognized("no item in the %s page", kind)
		}
		return nil
	}
}
