package ozon_test

import (
	"errors"
	"testing"

	"crawlq/tasks/ozon"
	"crawlq/tasks/site"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func TestURLs(t *testing.T) {
	tests := []struct {
		name, kind, base string
		req              site.Request
		want             string
		wantErr          error
	}{
		{name: "search cyrillic", kind: "search", req: site.Request{Query: "мыльная бабочка", Page: 1},
			want: "https://www.ozon.ru/api/entrypoint-api.bx/page/json/v2?url=%2Fsearch%2F%3Ftext%3D%25D0%25BC%25D1%258B%25D0%25BB%25D1%258C%25D0%25BD%25D0%25B0%25D1%258F%2B%25D0%25B1%25D0%25B0%25D0%25B1%25D0%25BE%25D1%2587%25D0%25BA%25D0%25B0%26page%3D1"},
		{name: "search on testbed", kind: "search", base: "http://127.0.0.1:9002", req: site.Request{Query: "a&b", Page: 3},
			want: "http://127.0.0.1:9002/api/entrypoint-api.bx/page/json/v2?url=%2Fsearch%2F%3Ftext%3Da%2526b%26page%3D3"},
		{name: "search empty query", kind: "search", req: site.Request{Page: 1}, wantErr: site.ErrBadRequest},
		{name: "search page -1", kind: "search", req: site.Request{Query: "x", Page: -1}, wantErr: site.ErrBadRequest},
		{name: "category slug", kind: "category", req: site.Request{Category: "korm-dlya-koshek-12348", Page: 2},
			want: "https://www.ozon.ru/api/entrypoint-api.bx/page/json/v2?url=%2Fcategory%2Fkorm-dlya-koshek-12348%2F%3Fpage%3D2"},
		{name: "category pasted url", kind: "category", req: site.Request{Category: "https://www.ozon.ru/category/korm-dlya-koshek-12348/?sorting=rating", Page: 1},
			want: "https://www.ozon.ru/api/entrypoint-api.bx/page/json/v2?url=%2Fcategory%2Fkorm-dlya-koshek-12348%2F%3Fpage%3D1"},
		{name: "category bad", kind: "category", req: site.Request{Category: "Корм!", Page: 1}, wantErr: site.ErrBadRequest},
		{name: "product id", kind: "product", req: site.Request{ID: "747122168"},
			want: "https://www.ozon.ru/product/747122168/"},
		{name: "product pasted url", kind: "product",
			req:  site.Request{URL: "https://www.ozon.ru/product/kaff-platan-s-lyubovyu-650256039/?advert=abc&avtc=1"},
			want: "https://www.ozon.ru/product/kaff-platan-s-lyubovyu-650256039/"},
		{name: "product pasted url on testbed", kind: "product", base: "http://127.0.0.1:9002",
			req:  site.Request{URL: "ozon.ru/product/kaff-platan-s-lyubovyu-650256039"},
			want: "http://127.0.0.1:9002/product/kaff-platan-s-lyubovyu-650256039/"},
		{name: "product url without id", kind: "product", req: site.Request{URL: "https://www.ozon.ru/seller/11i-professional-975642/"}, wantErr: site.ErrBadRequest},
		{name: "product empty", kind: "product", req: site.Request{}, wantErr: site.ErrBadRequest},
		{name: "unknown kind", kind: "item", req: site.Request{ID: "1"}, wantErr: site.ErrUnknownKind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ozon.New()
			s.BaseURL = tt.base
			got, err := s.URL(tt.kind, tt.req)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
