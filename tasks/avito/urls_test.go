package avito_test

import (
	"errors"
	"testing"

	"crawlq/tasks/avito"
	"crawlq/tasks/site"
)

func TestURLs(t *testing.T) {
	tests := []struct {
		name, kind, base string
		req              site.Request
		want             string
		wantErr          error
	}{
		{name: "search with location", kind: "search", req: site.Request{Query: "iphone 15", Location: "moskva", Page: 2},
			want: "https://www.avito.ru/moskva?q=iphone+15&p=2"},
		{name: "search default location cyrillic", kind: "search", req: site.Request{Query: "велосипед", Page: 1},
			want: "https://www.avito.ru/rossiya?q=%D0%B2%D0%B5%D0%BB%D0%BE%D1%81%D0%B8%D0%BF%D0%B5%D0%B4&p=1"},
		{name: "search on testbed", kind: "search", base: "http://127.0.0.1:9003", req: site.Request{Query: "дом", Location: "krasnodar", Page: 1},
			want: "http://127.0.0.1:9003/krasnodar?q=%D0%B4%D0%BE%D0%BC&p=1"},
		{name: "search bad location", kind: "search", req: site.Request{Query: "x", Location: "Москва", Page: 1}, wantErr: site.ErrBadRequest},
		{name: "search empty query", kind: "search", req: site.Request{Location: "moskva", Page: 1}, wantErr: site.ErrBadRequest},
		{name: "search page 0", kind: "search", req: site.Request{Query: "x", Page: 0}, wantErr: site.ErrBadRequest},
		{name: "category without query", kind: "category", req: site.Request{Location: "krasnodar", Category: "kvartiry/sdam", Page: 3},
			want: "https://www.avito.ru/krasnodar/kvartiry/sdam?p=3"},
		{name: "category with query", kind: "category", req: site.Request{Location: "krasnodar", Category: "/kvartiry/", Query: "студия", Page: 1},
			want: "https://www.avito.ru/krasnodar/kvartiry?q=%D1%81%D1%82%D1%83%D0%B4%D0%B8%D1%8F&p=1"},
		{name: "category missing", kind: "category", req: site.Request{Location: "krasnodar", Page: 1}, wantErr: site.ErrBadRequest},
		{name: "item pasted url", kind: "item",
			req:  site.Request{URL: "https://www.avito.ru/krasnodar/kvartiry/kvartira-studiya_24_m_1016_et._3889452914?context=abc"},
			want: "https://www.avito.ru/krasnodar/kvartiry/kvartira-studiya_24_m_1016_et._3889452914"},
		{name: "item pasted url on testbed", kind: "item", base: "http://127.0.0.1:9003",
			req:  site.Request{URL: "avito.ru/krasnodar/kvartiry/kvartira-studiya_24_m_1016_et._3889452914"},
			want: "http://127.0.0.1:9003/krasnodar/kvartiry/kvartira-studiya_24_m_1016_et._3889452914"},
		{name: "item id", kind: "item", req: site.Request{ID: "3889452914"}, want: "https://www.avito.ru/3889452914"},
		{name: "item url without id", kind: "item", req: site.Request{URL: "https://www.avito.ru/krasnodar/kvartiry"}, wantErr: site.ErrBadRequest},
		{name: "search-api all of russia", kind: "search-api", req: site.Request{Query: "ноутбук", Page: 2},
			want: "https://www.avito.ru/web/1/js/items?p=2&q=%D0%BD%D0%BE%D1%83%D1%82%D0%B1%D1%83%D0%BA&updateListOnly=true"},
		{name: "search-api locationId", kind: "search-api", req: site.Request{Query: "x", Location: "637640", Page: 1},
			want: "https://www.avito.ru/web/1/js/items?locationId=637640&p=1&q=x&updateListOnly=true"},
		{name: "search-api slug location", kind: "search-api", req: site.Request{Query: "x", Location: "moskva", Page: 1}, wantErr: site.ErrBadRequest},
		{name: "unknown kind", kind: "product", req: site.Request{ID: "1"}, wantErr: site.ErrUnknownKind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := avito.New()
			s.BaseURL = tt.base
			got, err := s.URL(tt.kind, tt.req)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
