package ozon_test

import (
	"encoding/json"
	"strings"
	"testing"

	"crawlq/tasks/site"
)

// withRatingList is the real 2026-08 capture with its first tile's rating
// list (labelListV2 "tile-list-rating") replaced by items: a CONSTRUCTED
// answer, the rest of it real.
func withRatingList(t *testing.T, items string) []byte {
	t.Helper()
	var answer struct {
		WidgetStates map[string]string `json:"widgetStates"`
	}
	if err := json.Unmarshal(testdata(t, "ozon_composer_search_2026-08.json"), &answer); err != nil {
		t.Fatal(err)
	}
	for k, v := range answer.WidgetStates {
		var st map[string]any
		if err := json.Unmarshal([]byte(v), &st); err != nil {
			t.Fatal(err)
		}
		tile := st["items"].([]any)[0].(map[string]any)
		for _, e := range tile["mainState"].([]any) {
			l, ok := e.(map[string]any)["labelListV2"].(map[string]any)
			if ok && l["testInfo"].(map[string]any)["automatizationId"] == "tile-list-rating" {
				var v any
				if err := json.Unmarshal([]byte(items), &v); err != nil {
					t.Fatal(err)
				}
				l["items"] = v
			}
		}
		b, _ := json.Marshal(st)
		answer.WidgetStates[k] = string(b)
	}
	b, _ := json.Marshal(answer)
	return b
}

// TestRatingListForms: the tile's rating and review count are read from
// every form of the rating list public 2026 clients meet. The capture of
// 2026-08 (text "339 отзывов" after a dialog icon) is real; the late-2026
// forms are CONSTRUCTED from public code (docs/sites.md, Ozon): a bare
// count with a thousands separator and no "отзыв", an "Ozon" badge after
// Ozon's own icon, no icons at all, flat icon names and "1,2 тыс.". The
// count is never taken for the rating ("4 859" was read as rating 4) and
// a bare count is no longer 0 reviews.
func TestRatingListForms(t *testing.T) {
	icon := func(name string) string { return `{"type":"icon","icon":{"icon":{"icon":"` + name + `"}}}` }
	text := func(s string) string { return `{"type":"text","text":{"text":"` + s + `"}}` }
	list := func(parts ...string) string { return "[" + strings.Join(parts, ",") + "]" }
	tests := []struct {
		name    string
		items   string
		rating  float64
		reviews int
	}{
		{name: "icons, bare count with NBSP, Ozon badge",
			items:  list(icon("ic_s_star_filled_compact"), text("4.9"), icon("ic_s_dialog_filled_compact"), text("4\u00a0859"), icon("ic_s_ozon_circle_filled_compact"), text("Ozon")),
			rating: 4.9, reviews: 4859},
		{name: "bare list without icons", items: list(text("4.9"), text("4 859"), text("Ozon")), rating: 4.9, reviews: 4859},
		{name: "flat icon names, thousands abbreviated",
			items:  list(`{"type":"icon","icon":"ic_s_star"}`, text("4,8"), text("1,2 тыс. отзывов")),
			rating: 4.8, reviews: 1200},
		{name: "Ozon badge only", items: list(icon("ic_s_ozon_circle_filled_compact"), text("Ozon"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := site.Parse("ozon", "search", withRatingList(t, tt.items), composerURL, at)
			if err != nil {
				t.Fatal(err)
			}
			if it := page.Items[0]; it.Rating != tt.rating || it.Reviews != tt.reviews {
				t.Errorf("rating %v, reviews %d; want %v, %d", it.Rating, it.Reviews, tt.rating, tt.reviews)
			}
			if it := page.Items[1]; it.Rating != 4.7 || it.Reviews != 472 {
				t.Errorf("second (real) tile: rating %v, reviews %d; want 4.7, 472", it.Rating, it.Reviews)
			}
		})
	}
}
