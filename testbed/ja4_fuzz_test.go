package testbed

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseClientHello: any bytes give a ClientHello or an error, never a
// panic, and a parsed hello always has a JA4 of the right shape.
func FuzzParseClientHello(f *testing.F) {
	for _, name := range []string{"hello-chromium-156.hex", "hello-firefox-esr-153.hex"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		raw, _ := hex.DecodeString(strings.TrimSpace(string(b)))
		f.Add(raw)
		f.Add(raw[:len(raw)/2])
	}
	f.Add([]byte{0x16, 3, 1, 0, 4, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, raw []byte) {
		h, err := ParseClientHello(raw)
		if err != nil {
			return
		}
		if parts := strings.Split(h.JA4(), "_"); len(parts) != 3 || len(parts[0]) != 10 || len(parts[1]) != 12 || len(parts[2]) != 12 {
			t.Errorf("JA4 %q has the wrong shape", h.JA4())
		}
	})
}
