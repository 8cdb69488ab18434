package proxies

import (
	"reflect"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestFallbackKeepsEveryCapability: the fallback broker offers every
// capability there is (a field added to Capabilities and not set for it
// fails here), exits, rotations and clearances being its primary's own,
// and the Redis broker every one but Ends.
func TestFallbackKeepsEveryCapability(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // no call is made
	defer rdb.Close()
	b := NewRedisBroker(rdb, Config{})
	fb := NewFallbackBroker(b, FallbackConfig{ServerID: "a"})
	var missing []string
	fc := reflect.ValueOf(fb.Capabilities())
	for i := range fc.NumField() {
		if fc.Field(i).IsNil() {
			missing = append(missing, fc.Type().Field(i).Name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("the fallback broker lacks %v", missing)
	}
	pc, c := b.Capabilities(), fb.Capabilities()
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"Exits", c.Exits, pc.Exits},
		{"Rotations", c.Rotations, pc.Rotations},
		{"Clearances", c.Clearances, pc.Clearances},
		{"Lines", c.Lines, pc.Lines},
		{"Seats", c.Seats, pc.Seats},
		{"PipelineLeases", c.PipelineLeases, fb},
		{"PipelineReleases", c.PipelineReleases, fb},
		{"Ends", c.Ends, fb},
	} {
		if tc.got != tc.want {
			t.Errorf("fallback's %s = %T %p, want %T %p", tc.name, tc.got, tc.got, tc.want, tc.want)
		}
	}
	rc := reflect.ValueOf(pc)
	for i := range rc.NumField() {
		name := rc.Type().Field(i).Name
		if rc.Field(i).IsNil() != (name == "Ends") {
			t.Errorf("the Redis broker's %s is nil: %v (only Ends should be)", name, rc.Field(i).IsNil())
		}
	}
}
