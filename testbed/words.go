package testbed

import "strings"

// goods are the catalog's product kinds: a title head and the attributes
// that may follow it. Each kind is one query word that finds it ("кофе").
var goods = []struct {
	head, avitoCategory string
	attrs               []string
}{
	{"Кофе в зернах", "produkty_pitaniya", []string{"арабика", "робуста", "эспрессо", "средней обжарки"}},
	{"Чай черный", "produkty_pitaniya", []string{"листовой", "с бергамотом", "в пакетиках", "цейлонский"}},
	{"Швабра с отжимом", "dlya_doma_i_dachi", []string{"и ведром", "плоская", "с насадкой", "телескопическая"}},
	{"Корм для кошек", "tovary_dlya_zhivotnyh", []string{"сухой", "влажный", "для стерилизованных", "с курицей"}},
	{"Наушники беспроводные", "audio_i_video", []string{"с шумоподавлением", "спортивные", "накладные", "вкладыши"}},
	{"Кроссовки мужские", "odezhda_obuv_aksessuary", []string{"для бега", "летние", "кожаные", "на платформе"}},
	{"Футболка женская", "odezhda_obuv_aksessuary", []string{"хлопковая", "оверсайз", "с принтом", "базовая"}},
	{"Рюкзак городской", "odezhda_obuv_aksessuary", []string{"водонепроницаемый", "с отделением для ноутбука", "школьный", "туристический"}},
	{"Кружка керамическая", "posuda_i_tovary_dlya_kuhni", []string{"с крышкой", "большая", "с рисунком", "термокружка"}},
	{"Лампа настольная", "dlya_doma_i_dachi", []string{"светодиодная", "с USB", "для школьника", "гибкая"}},
	{"Чайник электрический", "bytovaya_tehnika", []string{"стеклянный", "с подсветкой", "металлический", "1.7 л"}},
	{"Сковорода антипригарная", "posuda_i_tovary_dlya_kuhni", []string{"с крышкой", "чугунная", "гриль", "28 см"}},
	{"Подушка ортопедическая", "dlya_doma_i_dachi", []string{"с эффектом памяти", "для сна", "анатомическая", "50х70"}},
	{"Смартфон", "telefony", []string{"128 ГБ", "256 ГБ", "с NFC", "две SIM"}},
	{"Чехол для телефона", "telefony", []string{"силиконовый", "противоударный", "книжка", "прозрачный"}},
	{"Мыло ручной работы", "krasota_i_zdorove", []string{"бабочка", "с маслами", "детское", "натуральное"}},
	{"Шампунь для волос", "krasota_i_zdorove", []string{"восстанавливающий", "от перхоти", "для объема", "бессульфатный"}},
	{"Велосипед горный", "velosipedy", []string{"26 дюймов", "29 дюймов", "складной", "детский"}},
}

var brands = []string{
	"Zetter", "Nordika", "Vesta", "Amber", "Polaris", "Orion", "Gorizont",
	"Sever", "Lumen", "Kedr", "Altai", "Baikal", "Volna", "Zarya", "Rubin",
}

var sellerNames = []string{
	"Маркетспейс низких цен", "ООО Торговый дом", "ИП Смирнов", "Zetter - официальный магазин",
	"Домашний уют", "Эко Лавка", "Техносфера", "Спорт Профи", "Мир посуды", "Лапки и хвосты",
	"Модный квартал", "ИП Кузнецова", "Гаджет Плюс", "Чистый дом", "Красота и здоровье",
	"Велоцентр", "Кофейная лавка", "Агентство Частник", "Пользователь", "Семейный магазин",
}

var avitoLocations = []string{"moskva", "sankt-peterburg", "krasnodar", "kazan", "novosibirsk"}

// translit maps Cyrillic to Latin for URL slugs, the way the sites do.
var translit = map[rune]string{
	'а': "a", 'б': "b", 'в': "v", 'г': "g", 'д': "d", 'е': "e", 'ё': "e", 'ж': "zh",
	'з': "z", 'и': "i", 'й': "y", 'к': "k", 'л': "l", 'м': "m", 'н': "n", 'о': "o",
	'п': "p", 'р': "r", 'с': "s", 'т': "t", 'у': "u", 'ф': "f", 'х': "h", 'ц': "ts",
	'ч': "ch", 'ш': "sh", 'щ': "sch", 'ъ': "", 'ы': "y", 'ь': "", 'э': "e", 'ю': "yu",
	'я': "ya",
}

// slug turns a title into a lower-case Latin URL slug with dashes.
func slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		s, ok := translit[r]
		switch {
		case ok:
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			s = string(r)
		default:
			s = ""
			if b.Len() > 0 {
				dash = true
			}
		}
		if s == "" {
			continue
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteString(s)
	}
	return b.String()
}

// words splits text into lower-case words for search matching.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= 'а' && r <= 'я' || r == 'ё')
	})
}
