package detect

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// suspect makes v a Suspect verdict that becomes ifConfirmed when a second
// proxy agrees; when the rule confirms nothing (confirm: 0) it is alone,
// the verdict the answer gets by itself.
func (c *compiled) suspect(v Verdict, alone, ifConfirmed Kind) Verdict {
	if !c.rule.Confirms() {
		v.Kind, v.Shape = alone, ""
		return v
	}
	v.Kind, v.IfConfirmed = Suspect, ifConfirmed
	return v
}

// totalOf reads a JSON answer's result count, " total=N", from a
// top-level "total" or "data.total" number; "" when it has none.
func totalOf(body []byte) string {
	if t, ok := total(body); ok {
		return " total=" + t.String()
	}
	return ""
}

// total is a JSON answer's top-level "total" or "data.total" number.
func total(body []byte) (json.Number, bool) {
	var top struct {
		Total *json.Number `json:"total"`
		Data  struct {
			Total *json.Number `json:"total"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &top) != nil {
		return "", false
	}
	for _, t := range []*json.Number{top.Total, top.Data.Total} {
		if t != nil {
			return *t, true
		}
	}
	return "", false
}

// pastEnd says an empty answer on page is past the end of the listing by
// the site's own description: the rule knows a full page's size, and the
// answer's total, above 0, is no more than the pages before page hold.
// A soft ban's empty answer gives no total, or 0: it stays Suspect; so
// does an empty page the total says should have items.
func (c *compiled) pastEnd(body []byte, page int) bool {
	if c.rule.PageSize <= 0 || page < 2 {
		return false
	}
	t, ok := total(body)
	if !ok {
		return false
	}
	n, err := t.Int64()
	return err == nil && n > 0 && n <= int64(page-1)*int64(c.rule.PageSize)
}

// wellFormed says an HTML page is a page of the site and not a stub or an
// error fragment: it has a non-empty <title> and a <body> with elements.
// Only on such a page is a missing expected selector ambiguous.
func wellFormed(doc *goquery.Document) bool {
	title := strings.TrimSpace(doc.Find("title").First().Text())
	return title != "" && doc.Find("body").Children().Length() > 0
}

// Decision is what a second proxy's answer makes of a Suspect one.
type Decision uint8

// Decisions of Decide.
const (
	// Agreed: both answers say the same; the answer is true and takes the
	// first verdict's IfConfirmed kind; both proxies are cleared.
	Agreed Decision = iota + 1
	// Contradicted: the second answer has what the first lacked; the
	// first proxy was soft-banned (quarantine it with the first verdict's
	// rule) and the second answer is the one to use.
	Contradicted
	// Undecided: the second answer is Suspect for another reason, Blocked,
	// or no answer at all; each proxy goes by its own verdict.
	Undecided
)

var decisionNames = map[Decision]string{Agreed: "agreed", Contradicted: "contradicted", Undecided: "undecided"}

// String names the decision.
func (d Decision) String() string {
	if s, ok := decisionNames[d]; ok {
		return s
	}
	return "decision(" + strconv.Itoa(int(d)) + ")"
}

// Decide compares a Suspect answer (first) with the answer a second proxy
// of the same class gave to the same request (second). They agree when
// the second is Suspect for the same reason with the same shape (the same
// empty list and total, the same missing selectors, or a size in the
// same band below the baseline); the second contradicts the first when it
// is OK.
func Decide(first, second Verdict) Decision {
	switch {
	case first.Kind != Suspect:
		return Undecided
	case second.Kind == OK:
		return Contradicted
	case second.Kind == Suspect && second.Reason == first.Reason && second.Shape == first.Shape:
		return Agreed
	}
	return Undecided
}
