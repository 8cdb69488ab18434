package numstr

import "testing"

func TestInt64(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int64
	}{
		{name: "number", in: "1712345678901", want: 1712345678901},
		{name: "negative", in: "-3", want: -3},
		{name: "missing field", in: "", want: 0},
		{name: "not a number", in: "x1", want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Int64(tc.in); got != tc.want {
				t.Errorf("Int64(%q) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}
