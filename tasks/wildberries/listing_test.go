package wildberries_test

import (
	"fmt"
	"strings"
	"testing"

	"crawlq/detect"
	"crawlq/tasks/site"
	"crawlq/tasks/wildberries"
)

// TestListingEndsAtItsLastPage: a JSON search page has a next page only
// when it is full (wildberries.PageSize products) and, when the answer
// gives a total, the full pages so far hold fewer: a short page is the
// last, whatever the total, so the page after it is never asked for.
func TestListingEndsAtItsLastPage(t *testing.T) {
	tests := []struct {
		name            string
		page, n, total  int
		next, withTotal bool
	}{
		{"full page 1 of 150", 1, 100, 150, true, true},
		{"short page 2 of 150", 2, 50, 150, false, true},
		{"full page 2 of 200", 2, 100, 200, false, true},
		{"full page 2 of 201", 2, 100, 201, true, true},
		{"short page 1 of 40", 1, 40, 40, false, true},
		{"empty page 3", 3, 0, 150, false, true},
		{"full page without a total", 2, 100, 0, true, false},
		{"short page without a total", 2, 99, 0, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := fmt.Sprintf("https://www.wildberries.ru/__internal/u-search/exactmatch/ru/common/v18/search?query=x&page=%d", tc.page)
			p, err := site.Parse(wildberries.Name, "search", searchAnswer(tc.n, tc.total, tc.withTotal), u, at)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Items) != tc.n || p.Next != tc.next {
				t.Errorf("got %d items, next %v; want %d, next %v", len(p.Items), p.Next, tc.n, tc.next)
			}
		})
	}
}

// TestPageSizeIsTheDetectorsToo: the built-in search rule reads a full
// page as the parser does, so an empty page past the total is the end
// for both.
func TestPageSizeIsTheDetectorsToo(t *testing.T) {
	if got := detect.Builtin().Effective(wildberries.Name, "search").PageSize; got != wildberries.PageSize {
		t.Errorf("built-in page_size %d, parser's PageSize %d", got, wildberries.PageSize)
	}
}

// searchAnswer is a v18 search answer with n products and, if withTotal,
// its total.
func searchAnswer(n, total int, withTotal bool) []byte {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf(`{"id":%d,"name":"Кофе %d","sizes":[{"price":{"basic":20000,"product":15000}}]}`, 1000+i, i)
	}
	head := `{"metadata":{"name":"x"},`
	if withTotal {
		head += fmt.Sprintf(`"total":%d,`, total)
	}
	return []byte(head + `"products":[` + strings.Join(ps, ",") + `]}`)
}
