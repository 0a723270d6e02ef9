package main

import (
	"cmp"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// revision is the source revision when the build could not read it from version control (a
// container build has no .git): go build -ldflags "-X main.revision=$(git rev-parse HEAD)".
var revision string

// version describes this build: the module version, the source revision it was built from
// (marked when the tree had changes) and the Go version, from the build information Go embeds.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "kontermatt (no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	rev, at := revision, ""
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	parts := []string{"kontermatt " + v}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if modified {
			rev += "+changes"
		}
		parts = append(parts, "revision "+rev)
	}
	if at != "" {
		parts = append(parts, at)
	}
	parts = append(parts, bi.GoVersion)
	return strings.Join(parts, ", ")
}

// buildLabels are the build's version, source revision and Go version, for the build_info metric.
func buildLabels() (v, rev, goVersion string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", revision, ""
	}
	rev = revision
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			rev = s.Value
		}
	}
	return cmp.Or(bi.Main.Version, "(devel)"), rev, bi.GoVersion
}

func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if code, ok := parseFlags(newFlags("version"), args, 0, stdout, stderr); !ok {
		return code
	}
	fmt.Fprintln(stdout, version())
	return 0
}
