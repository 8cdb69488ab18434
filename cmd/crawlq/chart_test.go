package main

import (
	"os"
	"strings"
	"testing"
)

// chartFlagsFile lists, per command, the flags the Helm chart passes
// (deploy/helm/chartest checks the rendered chart passes no others).
const chartFlagsFile = "../../deploy/helm/chartest/testdata/flags.txt"

// TestChartFlagsExist: every flag the Helm chart passes is a flag of that
// command (its own or a global one), so a renamed flag fails here, not in
// a cluster.
func TestChartFlagsExist(t *testing.T) {
	b, err := os.ReadFile(chartFlagsFile)
	if err != nil {
		t.Fatal(err)
	}
	root := newRootCmd()
	lines := 0
	for _, l := range strings.Split(string(b), "\n") {
		name, flags, ok := strings.Cut(l, ":")
		if !ok || strings.HasPrefix(l, "#") {
			continue
		}
		lines++
		cmd, rest, err := root.Find(strings.Fields(name))
		if err != nil || len(rest) > 0 || cmd.CommandPath() != "crawlq "+name {
			t.Errorf("%s: `crawlq %s` is no command (found %q, left %v, %v)", chartFlagsFile, name, cmd.CommandPath(), rest, err)
			continue
		}
		for _, f := range strings.Fields(flags) {
			n := strings.TrimPrefix(f, "--")
			if cmd.Flags().Lookup(n) == nil && cmd.InheritedFlags().Lookup(n) == nil {
				t.Errorf("%s: %s is not a flag of `crawlq %s`", chartFlagsFile, f, name)
			}
		}
	}
	if lines == 0 {
		t.Errorf("%s lists no command", chartFlagsFile)
	}
}
