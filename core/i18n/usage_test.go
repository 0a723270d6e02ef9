package i18n

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// variantSuffixes are the endings code adds to a key it names: a plural form (chosen by N), or a
// surface's variant (core/table adds ".you" and ".typed").
var variantSuffixes = append([]string{"you", "typed"}, formNames...)

// unusedKeys gives the keys no code names. Code names a key with a string literal: the key
// itself, or a family prefix ending in "." followed by another literal ("help."+verb with the
// verb "deal" written somewhere); a variant's ending must be written somewhere too (".you").
func unusedKeys(keys []string, literals map[string]bool) []string {
	var prefixes []string
	for l := range literals {
		if len(l) > 1 && strings.HasSuffix(l, ".") && !strings.HasPrefix(l, ".") {
			prefixes = append(prefixes, l)
		}
	}
	named := func(key string) bool {
		if literals[key] {
			return true
		}
		for _, p := range prefixes {
			if rest, ok := strings.CutPrefix(key, p); ok && literals[rest] {
				return true
			}
		}
		return false
	}
	var out []string
	for _, key := range keys {
		base, used := key, named(key)
		for !used {
			i := strings.LastIndexByte(base, '.')
			if i < 0 || !slices.Contains(variantSuffixes, base[i+1:]) {
				break
			}
			suffix := base[i:]
			base = base[:i]
			if !slices.Contains(formNames, suffix[1:]) && !literals[suffix] && !named(base+suffix) {
				break // a ".you" text that no code ever asks for
			}
			used = named(base)
		}
		if !used {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

// sourceLiterals collects the string literals of the module's Go code, tests and the catalog
// itself left out.
func sourceLiterals(t *testing.T) map[string]bool {
	t.Helper()
	root := "../.."
	out := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		if rel, _ := filepath.Rel(root, path); rel == filepath.Join("core", "i18n", "en.go") || rel == filepath.Join("core", "i18n", "other.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					out[s] = true
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !out["card.name"] {
		t.Fatalf("read no code from %s: the key card.name is not among %d literals", root, len(out))
	}
	return out
}

// notYetUsed are texts in the catalog before their code says them. The test fails once they are
// used, so the list only shrinks.
var notYetUsed = []string{}

// TestEveryKeyIsUsed fails on a text that no code says any more: a removed feature's words, or a
// key whose name was changed on one side only.
func TestEveryKeyIsUsed(t *testing.T) {
	unused := unusedKeys(slices.Sorted(maps.Keys(en)), sourceLiterals(t))
	for _, key := range notYetUsed {
		if !slices.Contains(unused, key) {
			t.Errorf("%s is used now: take it off notYetUsed", key)
		}
	}
	unused = slices.DeleteFunc(unused, func(k string) bool { return slices.Contains(notYetUsed, k) })
	if len(unused) > 0 {
		t.Errorf("keys no code uses: %v", unused)
	}
}

func TestUnusedKeys(t *testing.T) {
	literals := map[string]bool{"rules.text": true, "help.": true, "deal": true, "trick.won": true, ".you": true,
		"lobby.hint.typed": true, "lobby.hint": true}
	keys := []string{"rules.text", "help.deal", "help.nothing", "trick.won.one", "trick.won.you.other", "lobby.hint.typed",
		"note.gone", "live.turn.you", "err.public.play.typed"}
	want := []string{"err.public.play.typed", "help.nothing", "live.turn.you", "note.gone"}
	if got := unusedKeys(keys, literals); !slices.Equal(got, want) {
		t.Errorf("unusedKeys = %v, want %v", got, want)
	}
}
