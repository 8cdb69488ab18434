package wildberries_test

import (
	"errors"
	"testing"

	"crawlq/tasks/site"
	"crawlq/tasks/wildberries"
)

const params = "&appType=1&curr=rub&dest=-1257786&spp=30"

func TestURLs(t *testing.T) {
	tests := []struct {
		name, kind, base string
		api              string
		req              site.Request
		want             string
		wantErr          error
	}{
		{name: "search cyrillic", kind: "search", req: site.Request{Query: " кроссовки  мужские ", Page: 2},
			want: "https://www.wildberries.ru/__internal/u-search/exactmatch/ru/common/v18/search?query=%D0%BA%D1%80%D0%BE%D1%81%D1%81%D0%BE%D0%B2%D0%BA%D0%B8+%D0%BC%D1%83%D0%B6%D1%81%D0%BA%D0%B8%D0%B5&page=2" + params + "&resultset=catalog&sort=popular"},
		{name: "search on testbed", kind: "search", base: "http://127.0.0.1:9001/", req: site.Request{Query: "iphone", Page: 1},
			want: "http://127.0.0.1:9001/__internal/u-search/exactmatch/ru/common/v18/search?query=iphone&page=1" + params + "&resultset=catalog&sort=popular"},
		{name: "search legacy", kind: "search", api: wildberries.APILegacy, req: site.Request{Query: "iphone", Page: 1},
			want: "https://search.wb.ru/exactmatch/ru/common/v9/search?query=iphone&page=1" + params + "&resultset=catalog&sort=popular"},
		{name: "search legacy on testbed", kind: "search", api: wildberries.APILegacy, base: "http://127.0.0.1:9001/", req: site.Request{Query: "iphone", Page: 1},
			want: "http://127.0.0.1:9001/exactmatch/ru/common/v9/search?query=iphone&page=1" + params + "&resultset=catalog&sort=popular"},
		{name: "product legacy", kind: "product", api: wildberries.APILegacy, req: site.Request{ID: "67858518"},
			want: "https://card.wb.ru/cards/v4/detail?nm=67858518" + params},
		{name: "search empty query", kind: "search", req: site.Request{Query: "  ", Page: 1}, wantErr: site.ErrBadRequest},
		{name: "search page 0", kind: "search", req: site.Request{Query: "x"}, wantErr: site.ErrBadRequest},
		{name: "category", kind: "category", req: site.Request{Category: "beauty3?cat=9000", Page: 3},
			want: "https://catalog.wb.ru/catalog/beauty3/v4/catalog?cat=9000&page=3" + params + "&locale=ru&sort=popular"},
		{name: "category bad", kind: "category", req: site.Request{Category: "кофе", Page: 1}, wantErr: site.ErrBadRequest},
		{name: "product id", kind: "product", req: site.Request{ID: "67858518"},
			want: "https://www.wildberries.ru/__internal/u-card/cards/v4/detail?nm=67858518" + params},
		{name: "product pasted url", kind: "product", req: site.Request{URL: "https://www.wildberries.ru/catalog/164419278/detail.aspx?targetUrl=GP&size=1"},
			want: "https://www.wildberries.ru/__internal/u-card/cards/v4/detail?nm=164419278" + params},
		{name: "product pasted url no scheme", kind: "product", req: site.Request{URL: "wildberries.ru/catalog/164419278/detail.aspx"},
			want: "https://www.wildberries.ru/__internal/u-card/cards/v4/detail?nm=164419278" + params},
		{name: "product on testbed", kind: "product", base: "http://127.0.0.1:9001", req: site.Request{ID: "67000001"},
			want: "http://127.0.0.1:9001/__internal/u-card/cards/v4/detail?nm=67000001" + params},
		{name: "product bad id", kind: "product", req: site.Request{ID: "12ab"}, wantErr: site.ErrBadRequest},
		{name: "product url without id", kind: "product", req: site.Request{URL: "https://www.wildberries.ru/brands/zetter"}, wantErr: site.ErrBadRequest},
		{name: "card id", kind: "card", req: site.Request{ID: "67858518"},
			want: "https://basket-04.wbbasket.ru/vol678/part67858/67858518/info/ru/card.json"},
		{name: "card first basket", kind: "card", req: site.Request{ID: "14399999"},
			want: "https://basket-01.wbbasket.ru/vol143/part14399/14399999/info/ru/card.json"},
		{name: "card next basket", kind: "card", req: site.Request{ID: "14400000"},
			want: "https://basket-02.wbbasket.ru/vol144/part14400/14400000/info/ru/card.json"},
		{name: "card basket-17 end", kind: "card", req: site.Request{ID: "283799999"},
			want: "https://basket-17.wbbasket.ru/vol2837/part283799/283799999/info/ru/card.json"},
		{name: "card basket-18", kind: "card", req: site.Request{ID: "283800000"},
			want: "https://basket-18.wbbasket.ru/vol2838/part283800/283800000/info/ru/card.json"},
		{name: "card 2026 nm on basket-27", kind: "card", req: site.Request{ID: "497398643"},
			want: "https://basket-27.wbbasket.ru/vol4973/part497398/497398643/info/ru/card.json"},
		{name: "card 2026 nm on basket-45", kind: "card", req: site.Request{ID: "1280469586"},
			want: "https://basket-45.wbbasket.ru/vol12804/part1280469/1280469586/info/ru/card.json"},
		{name: "card table end", kind: "card", req: site.Request{ID: "1882199999"},
			want: "https://basket-52.wbbasket.ru/vol18821/part1882199/1882199999/info/ru/card.json"},
		{name: "card past the known table", kind: "card", req: site.Request{ID: "1882200000"},
			want: "https://basket-52.wbbasket.ru/vol18822/part1882200/1882200000/info/ru/card.json"},
		{name: "card pasted card.json url", kind: "card", req: site.Request{URL: "https://basket-04.wbbasket.ru/vol678/part67858/67858518/info/ru/card.json"},
			want: "https://basket-04.wbbasket.ru/vol678/part67858/67858518/info/ru/card.json"},
		{name: "card pasted product url", kind: "card", req: site.Request{URL: "https://www.wildberries.ru/catalog/164419278/detail.aspx"},
			want: "https://basket-11.wbbasket.ru/vol1644/part164419/164419278/info/ru/card.json"},
		{name: "card on testbed", kind: "card", base: "http://127.0.0.1:9001", req: site.Request{ID: "67000001"},
			want: "http://127.0.0.1:9001/vol670/part67000/67000001/info/ru/card.json"},
		{name: "card bad id", kind: "card", req: site.Request{ID: "67858518x"}, wantErr: site.ErrBadRequest},
		{name: "card url without id", kind: "card", req: site.Request{URL: "https://basket-04.wbbasket.ru/vol678/info/ru/card.json"}, wantErr: site.ErrBadRequest},
		{name: "unknown kind", kind: "item", req: site.Request{ID: "1"}, wantErr: site.ErrUnknownKind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := site.NewRegistry()
			if err := r.Add(wildberries.New()); err != nil {
				t.Fatal(err)
			}
			if tt.api != "" {
				if err := r.Apply(site.Config{Sites: map[string]site.SiteConfig{"wildberries": {API: tt.api}}}); err != nil {
					t.Fatal(err)
				}
			}
			s, _ := r.Get("wildberries")
			s.BaseURL = tt.base
			got, err := s.URL(tt.kind, tt.req)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestCardBasketEndpointFromConfig: endpoints.basket in YAML replaces the
// basket-NN host rule for every nm.
func TestCardBasketEndpointFromConfig(t *testing.T) {
	r := site.NewRegistry()
	if err := r.Add(wildberries.New()); err != nil {
		t.Fatal(err)
	}
	cfg := site.Config{Sites: map[string]site.SiteConfig{"wildberries": {Endpoints: map[string]string{"basket": "https://basket-30.wbbasket.ru/"}}}}
	if err := r.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	s, _ := r.Get("wildberries")
	got, err := s.URL("card", site.Request{ID: "67858518"})
	if want := "https://basket-30.wbbasket.ru/vol678/part67858/67858518/info/ru/card.json"; err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}
