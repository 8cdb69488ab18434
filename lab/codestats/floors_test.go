package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestFloors checks the floors architecture.md names: a package under
// internal/ imports (and its tests import) no package of ours outside
// internal/, and no product package (all but lab/, testbed/ and cmd/)
// depends on the lab or the testbed (their tests may use both).
func TestFloors(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}} | {{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 20 {
		t.Fatalf("go list listed %d packages; want the module's", len(lines))
	}
	for _, line := range lines {
		build, tests, _ := strings.Cut(line, "|")
		f := strings.Fields(build)
		pkg, deps := f[0], f[1:]
		for _, d := range append(deps, strings.Fields(tests)...) {
			if strings.HasPrefix(d, "crawlq/") && under(pkg, "crawlq/internal") && !under(d, "crawlq/internal") {
				t.Errorf("%s (ground floor) or its tests import %s", pkg, d)
			}
		}
		for _, d := range deps {
			if product(pkg) && (under(d, "crawlq/lab") || under(d, "crawlq/testbed")) {
				t.Errorf("product package %s depends on %s", pkg, d)
			}
		}
	}
}

// under reports whether pkg is dir or inside it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// product reports whether pkg is part of the product: not the lab, the
// testbed or the binary's wiring.
func product(pkg string) bool {
	return !under(pkg, "crawlq/lab") && !under(pkg, "crawlq/testbed") && !under(pkg, "crawlq/cmd")
}
