package detect_test

import (
	"fmt"
	"strings"
	"testing"

	"crawlq/detect"
)

// wbSearchPage is a WB-like search page of about size bytes.
func wbSearchPage(size int) []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><title>Купить кофе в интернет магазине WildBerries.ru</title></head><body><div class="catalog">`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `<article class="product-card" data-nm-id="%d"><a class="product-card__link" href="https://www.wildberries.ru/catalog/%d/detail.aspx"><span class="product-card__brand">DON CUP</span><span class="product-card__name">Кофе в зернах 1 кг</span></a><ins class="price__lower-price">500 ₽</ins></article>`, i, i)
	}
	b.WriteString(`</div></body></html>`)
	return []byte(b.String())
}

// wbSearchJSON is a WB-like search API response of about size bytes.
func wbSearchJSON(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"metadata":{"name":"кофе"},"data":{"products":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"Кофе в зернах \"DON CUP\"","brand":"DON CUP","sizes":[{"price":{"basic":400000,"product":163000}}],"reviewRating":4.9,"feedbacks":21358}`, i)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

// BenchmarkJudge judges a ~200 KB page that passes every check, the worst
// case: markers scanned, HTML parsed for the selectors (or JSON scanned),
// baseline updated.
func BenchmarkJudge(b *testing.B) {
	d := detect.New(detect.Builtin())
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"html", wbSearchPage(200 << 10)},
		{"json", wbSearchJSON(200 << 10)},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := &detect.Response{Status: 200, FinalURL: "https://www.wildberries.ru/catalog/0/search.aspx?search=кофе", Body: c.body}
			if v := d.Judge("wildberries", "search", r); v.Kind != detect.OK {
				b.Fatalf("page is not ok: %v", v)
			}
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				d.Judge("wildberries", "search", r)
			}
		})
	}
}

// BenchmarkJudgeBlocked judges a ~200 KB block page caught by a marker:
// no HTML parse.
func BenchmarkJudgeBlocked(b *testing.B) {
	d := detect.New(detect.Builtin())
	body := append(wbSearchPage(200<<10), "<h1>Доступ ограничен</h1>"...)
	r := &detect.Response{Status: 200, Body: body}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		d.Judge("wildberries", "search", r)
	}
}
