package detect

// Recognizer says whether an answer the rules judge OK is of the site's
// own shape for its kind: nil when it is, else why not (the parser found
// no item in a product page). It is called only on an answer that would
// be OK, with the answer's final URL; it must be safe for concurrent use.
type Recognizer func(site, kind string, body []byte, finalURL string) error

// WithRecognizer makes an answer that passes every rule but that r
// refuses Suspect ("unknown shape", shape "unrecognized"): asked once more
// from a second proxy like any ambiguous answer. The same refusal from
// both is an unknown shape, which the caller fails with the answer kept
// (never a page without items); a second proxy whose answer r takes
// proves the first was served something else. With confirm: 0 the answer
// stays OK, for the caller's parser to refuse.
func WithRecognizer(r Recognizer) Option { return func(d *Detector) { d.recognize = r } }

// Unrecognized is the Reason of a Suspect verdict the Recognizer gave.
const Unrecognized = "unknown shape"

// unrecognized asks the recognizer about a body that passed the rules.
func (d *Detector) unrecognized(c *compiled, j *judgement) (Verdict, bool) {
	if d.recognize == nil {
		return Verdict{}, false
	}
	err := d.recognize(j.site, j.kind, j.r.Body, j.r.FinalURL)
	if err == nil || !c.rule.Confirms() {
		return Verdict{}, false
	}
	return c.suspect(Verdict{Reason: Unrecognized, Rule: "no item: " + err.Error(), Shape: "unrecognized"}, OK, OK), true
}
