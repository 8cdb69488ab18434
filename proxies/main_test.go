package proxies

import (
	"os"
	"testing"

	"crawlq/internal/mask/masktest"
)

// TestMain fails the run if a test printed a planted secret on stderr, or
// in a log line after its test ended.
func TestMain(m *testing.M) { os.Exit(masktest.Main(m)) }
