package schedule_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the schedulers and workers of the tests stop
// cleanly: no goroutine outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
