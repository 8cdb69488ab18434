// Package masktest plants secrets in tests and fails a test, or the test
// binary, when one of them is printed: the secrets (ProxyPassword,
// RedisPassword, ChangeKey, WebhookToken…) all hold Marker; Logger and
// Core check every log line, Writer and Check command output, and Main
// every line written to the process's stderr.
//
// A package whose tests configure secrets uses these constants for them,
// logs through Logger or Core, passes command output to Check or Writer,
// and runs its tests under Main:
//
//	func TestMain(m *testing.M) { os.Exit(masktest.Main(m)) }
package masktest
