package ozon

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/PuerkitoBio/goquery"

	"crawlq/tasks/site"
)

// states holds the data-state JSON of every widget on a page, by widget
// name ("searchResultsV2", "webPrice"), in page order.
type states map[string][]json.RawMessage

// readStates parses the HTML and collects its widget states; the parser
// has already html-unescaped the attribute values.
func readStates(body []byte) (*goquery.Document, states, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, nil, site.BadBody("parse html: %w", err)
	}
	st := states{}
	doc.Find(`div[id^="state-"][data-state]`).Each(func(_ int, d *goquery.Selection) {
		name := widgetName(d.AttrOr("id", ""))
		raw := strings.TrimSpace(d.AttrOr("data-state", ""))
		if name != "" && raw != "" && raw != "{}" {
			st[name] = append(st[name], json.RawMessage(raw))
		}
	})
	return doc, st, nil
}

// widgetName: "state-webPrice-3121879-default-1" → "webPrice".
func widgetName(id string) string {
	rest, ok := strings.CutPrefix(id, "state-")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "-")
	return name
}

// first decodes the first state of the widget into v; ok is false when
// the page has none. A state that is not valid JSON is an error.
func (st states) first(widget string, v any) (bool, error) {
	raws := st[widget]
	if len(raws) == 0 {
		return false, nil
	}
	if err := json.Unmarshal(raws[0], v); err != nil {
		return false, site.BadBody("state %s: %w", widget, err)
	}
	return true, nil
}
