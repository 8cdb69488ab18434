package site_test

import (
	"testing"

	"crawlq/tasks/site"
)

func TestKopecks(t *testing.T) {
	tests := []struct {
		name, in string
		want     int64
		ok       bool
	}{
		{"ozon nbsp", "924\u00a0₽", 92400, true},
		{"ozon thin spaces", "2\u2009099\u2009₽", 209900, true},
		{"wb entity text", "1 204 ₽", 120400, true},
		{"decimal comma", "1 234,5 ₽", 123450, true},
		{"plain", "27000", 2700000, true},
		{"no digits", "Цена не указана", 0, false},
		{"absurd", "99999999999999999999", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := site.Kopecks(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("Kopecks(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestCountAndRating(t *testing.T) {
	if n, ok := site.Count("21\u00a0358 оценок"); n != 21358 || !ok {
		t.Errorf("Count = %d, %v", n, ok)
	}
	if n, ok := site.Count("4.9 • 32 582 отзыва"); n != 4 || !ok {
		t.Errorf("Count stops at the first number: %d, %v", n, ok)
	}
	if r, ok := site.Rating("4,9"); r != 4.9 || !ok {
		t.Errorf("Rating = %v, %v", r, ok)
	}
	if _, ok := site.Rating("7.5"); ok {
		t.Error("Rating accepted 7.5")
	}
}

func TestAvailability(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name, in string
		want     *bool
	}{
		{"ozon json-ld", "http://schema.org/InStock", &yes},
		{"https", "https://schema.org/OutOfStock", &no},
		{"bare", "SoldOut", &no},
		{"compact iri", "schema:Discontinued", &no},
		{"limited", "https://schema.org/LimitedAvailability", &yes},
		{"pre-order is not now", "http://schema.org/PreOrder", nil},
		{"empty", "", nil},
		{"unknown", "http://schema.org/Whatever", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := site.Availability(tt.in)
			if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
				t.Fatalf("Availability(%q) = %v, want %v", tt.in, show(got), show(tt.want))
			}
		})
	}
}

func show(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}
