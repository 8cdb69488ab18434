package detect_test

import (
	"errors"
	"strings"
	"testing"

	"crawlq/detect"
)

// TestRecognizerRefusalIsSuspect: a WB product page that passes every rule
// (the product-page container is there) but that the recognizer refuses
// is Suspect ("unknown shape"), and the same refusal twice agrees; one it
// takes is OK and contradicts the first; it is asked only about an
// answer the rules would pass (not a block page); with confirm: 0 the
// answer stays OK for the caller's parser to refuse.
func TestRecognizerRefusalIsSuspect(t *testing.T) {
	shell := `<html><head><title>Интернет-магазин Wildberries</title></head><body><main class="product-page"><div></div></main></body></html>`
	page := strings.Replace(shell, "<div></div>", `<h2 class="productTitle--jKvWV">Вентилятор</h2>`, 1)
	var asked []string
	recognize := func(site, kind string, body []byte, finalURL string) error {
		asked = append(asked, site+"/"+kind+" "+finalURL)
		if strings.Contains(string(body), "productTitle--") {
			return nil
		}
		return errors.New("no title")
	}
	d := detect.New(detect.Builtin(), detect.WithRecognizer(recognize))
	judge := func(d *detect.Detector, body string) detect.Verdict {
		return d.Judge("wildberries", "product", &detect.Response{Status: 200, FinalURL: "https://www.wildberries.ru/catalog/1/detail.aspx", Body: []byte(body)})
	}
	first, second := judge(d, shell), judge(d, shell)
	if first.Kind != detect.Suspect || first.Reason != detect.Unrecognized || first.IfConfirmed != detect.OK || !strings.Contains(first.Rule, "no title") {
		t.Fatalf("refused page: got %+v, want Suspect %q with the refusal in its rule", first, detect.Unrecognized)
	}
	if got := detect.Decide(first, second); got != detect.Agreed {
		t.Errorf("two refusals: %v, want agreed", got)
	}
	if ok := judge(d, page); ok.Kind != detect.OK || detect.Decide(first, ok) != detect.Contradicted {
		t.Errorf("recognized page: got %v, want OK contradicting the refusal", ok)
	}
	if len(asked) != 3 || asked[0] != "wildberries/product https://www.wildberries.ru/catalog/1/detail.aspx" {
		t.Errorf("recognizer asked %q, want three times with site, kind and final URL", asked)
	}
	if v := judge(d, `<html><head><title>Доступ ограничен</title></head><body><p>x</p></body></html>`); v.Kind != detect.Blocked || len(asked) != 3 {
		t.Errorf("block page: got %v after %d questions, want Blocked without asking the recognizer", v, len(asked))
	}
	user, err := detect.ParseRules("rules.yaml", []byte("sites:\n  wildberries:\n    default:\n      confirm: 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v := judge(detect.New(detect.Builtin().Merge(user), detect.WithRecognizer(recognize)), shell); v.Kind != detect.OK {
		t.Errorf("confirm: 0: got %v, want OK (the parser refuses it)", v)
	}
}
