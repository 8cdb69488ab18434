package testbed

// noResultWords are queries a shopper types that the catalog has nothing
// for: misspellings, goods it does not sell, a seller's brand it lacks.
var noResultWords = []string{
	"перец", "кофэ", "кросовки", "газонокосилка", "аквариум", "бензопила", "палатка", "самокат",
	"телескоп", "гантели", "пылесос", "холодильник", "утюг", "матрас", "шуруповерт", "ноутбук",
	"зонт", "перчатки", "шарф", "гитара", "микроволновка", "кастрюля", "свечи", "пазлы",
}

// NoResultQueries returns n queries that match no product of site (fewer
// if the word list runs out), the same on every call: the testbed's
// "nothing found" cases, answered with the site's no-results shape.
func (c *Catalog) NoResultQueries(site string, n int) []string {
	var out []string
	for _, q := range noResultWords {
		if len(out) == n {
			break
		}
		if len(c.Matches(site, q)) == 0 {
			out = append(out, q)
		}
	}
	return out
}
