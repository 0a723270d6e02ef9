package main

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// checkConfig reads a config file's YAML against Config and says, in the file's own words, what
// does not fit: a key Config does not have (with the one meant, if it looks like a typo), a
// section given a value or a value given a section, a value that is not a number, a duration or
// true/false where one is needed. The YAML decoder's own messages name Go types instead.
func checkConfig(doc *yaml.Node) []string {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind == 0 || doc.Kind == yaml.ScalarNode && doc.Tag == "!!null" {
		return nil // an empty file, or only comments
	}
	var problems []string
	checkNode(doc, reflect.TypeOf(Config{}), "", &problems)
	return problems
}

var durationType = reflect.TypeOf(time.Duration(0))

func checkNode(n *yaml.Node, t reflect.Type, path string, problems *[]string) {
	say := func(format string, args ...any) {
		*problems = append(*problems, fmt.Sprintf("line %d: ", n.Line)+fmt.Sprintf(format, args...))
	}
	name := path
	if name == "" {
		name = "the file"
	}
	if t.Kind() == reflect.Struct {
		keys := yamlKeys(t)
		if n.Kind != yaml.MappingNode {
			// The value is not repeated: it may be a token put one level too high.
			say("%s should hold keys (%s), not a single value", name, strings.Join(sortedKeys(keys), ", "))
			return
		}
		first := map[string]int{} // key → the line it was first given on
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if line, again := first[k.Value]; again {
				*problems = append(*problems, fmt.Sprintf("line %d: %s is given twice (first on line %d): keep one", k.Line, join(path, k.Value), line))
				continue
			}
			first[k.Value] = k.Line
			f, ok := keys[k.Value]
			if !ok {
				msg := fmt.Sprintf("unknown key %q", join(path, k.Value))
				if near := closest(k.Value, sortedKeys(keys)); near != "" {
					msg += fmt.Sprintf(" (did you mean %s?)", join(path, near))
				} else {
					msg += fmt.Sprintf("; %s are %s", keysOf(path), strings.Join(sortedKeys(keys), ", "))
				}
				*problems = append(*problems, fmt.Sprintf("line %d: %s", k.Line, msg))
				continue
			}
			checkNode(v, f.Type, join(path, k.Value), problems)
		}
		return
	}
	if t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode {
		for _, item := range n.Content {
			checkNode(item, t.Elem(), name, problems)
		}
		return
	}
	if t.Kind() == reflect.Slice && n.Tag != "!!null" {
		say("%s should be a list, like [a, b]", name)
		return
	}
	if n.Kind != yaml.ScalarNode {
		say("%s should be a single value, not a list or keys", name)
		return
	}
	if n.Tag == "!!null" {
		return // the default
	}
	switch {
	case t == durationType:
		if _, err := time.ParseDuration(n.Value); err != nil {
			say("%s: %q is not a duration (write it like 2s, 90m or 720h)", name, n.Value)
		}
	case t.Kind() == reflect.Int:
		if _, err := strconv.Atoi(n.Value); err != nil {
			say("%s: %q is not a whole number", name, n.Value)
		}
	case t.Kind() == reflect.Uint64:
		if _, err := strconv.ParseUint(n.Value, 10, 64); err != nil {
			say("%s: %q is not a whole number of 0 or more", name, n.Value)
		}
	case t.Kind() == reflect.Bool:
		if _, err := strconv.ParseBool(n.Value); err != nil {
			say("%s: %q is not true or false", name, n.Value)
		}
	}
}

// keysOf names the keys of a section in a message: "the keys", "telegram's keys".
func keysOf(path string) string {
	if path == "" {
		return "the keys"
	}
	return path + "'s keys"
}

// keyLines gives the line each key of a config file is set on, by its path ("telegram.token");
// a key left empty (the default) is not set.
func keyLines(doc *yaml.Node) map[string]int {
	lines := map[string]int{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := join(path, k.Value)
			if v.Tag != "!!null" {
				lines[key] = k.Line
			}
			walk(v, key)
		}
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		walk(doc.Content[0], "")
	}
	return lines
}

// yamlKeys are a struct's keys as its yaml tags name them.
func yamlKeys(t reflect.Type) map[string]reflect.StructField {
	keys := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" {
			keys[name] = f
		}
	}
	return keys
}

func sortedKeys(keys map[string]reflect.StructField) []string {
	return slices.Sorted(maps.Keys(keys))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// closest is the known key a typo most likely meant: the same letters without "_" and case, or
// at most two edits away; "" when none is that close.
func closest(typed string, known []string) string {
	squash := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	best, bestD := "", 3
	for _, k := range known {
		if squash(k) == squash(typed) {
			return k
		}
		if d := editDistance(squash(typed), squash(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between two short strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
