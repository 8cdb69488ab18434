package proxies

import "os"

func osWriteFile(p, s string) error { return os.WriteFile(p, []byte(s), 0o600) }
