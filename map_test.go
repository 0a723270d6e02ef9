package kontermatt_test

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadmeNamesEveryPackage keeps the README's map true: every package of the module (a
// directory with Go files that are not tests, as go/build reads it) is named in "What is where"
// as `path/` or `path`, so a newcomer finds the room they are in. A package added without a line
// there fails here.
func TestReadmeNamesEveryPackage(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## What is where\n")
	if !ok {
		t.Fatal(`README.md has no "## What is where" section`)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	pkgs := modulePackages(t, ".")
	if !slices.Contains(pkgs, "core/table") || !slices.Contains(pkgs, "cmd/bot") {
		t.Fatalf("the walk found %v: not this module's packages", pkgs) // the test must not pass on nothing
	}
	for _, p := range pkgs {
		if !strings.Contains(section, "`"+p+"/`") && !strings.Contains(section, "`"+p+"`") {
			t.Errorf("README.md's \"What is where\" does not name package %s (as `%s/`)", p, p)
		}
	}
}

// modulePackages lists the directories under root that hold a package, as slash paths relative
// to root, skipping testdata, hidden directories and those go/build ignores (a leading _ or .).
func modulePackages(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		var none *build.NoGoError
		switch {
		case errors.As(err, &none):
			return nil
		case err != nil:
			return err
		}
		if len(pkg.GoFiles)+len(pkg.CgoFiles) > 0 && path != root {
			out = append(out, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
