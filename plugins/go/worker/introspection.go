// SPDX-License-Identifier: Apache-2.0

package main

import (
	"go/token"
	"path"
	"reflect"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Completion and the variables view. yaegi has no completion API: names come from what the
// interpreter was given (the compiled packages), the declarations cells made, the interpreter's
// globals, and reflection on the values of globals.

var predeclared = []string{
	"append", "cap", "close", "complex", "copy", "delete", "imag", "len", "make", "new", "panic",
	"print", "println", "real", "recover",
	"bool", "byte", "complex64", "complex128", "error", "float32", "float64", "int", "int8",
	"int16", "int32", "int64", "rune", "string", "uint", "uint8", "uint16", "uint32", "uint64",
	"uintptr", "any", "true", "false", "nil", "iota", "display",
}

// packageNames maps the names under which packages are usable to their import paths: every
// compiled package whose name is not ambiguous (yaegi's ImportUsed hides "rand", which is both
// math/rand and crypto/rand), and everything cells imported.
func (r *runner) packageNames() map[string]string {
	count := map[string]int{}
	for key := range r.exports {
		count[path.Base(key)]++
	}
	names := map[string]string{}
	for key := range r.exports {
		if name := path.Base(key); count[name] == 1 {
			names[name] = path.Dir(key)
		}
	}
	for key := range r.imported {
		if name, importPath, ok := strings.Cut(key, " "); ok && name != "_" && name != "." {
			names[name] = importPath
		}
	}
	return names
}

// globals is the interpreter's global variables and constants; empty if yaegi fails on them.
func (r *runner) globals() (globals map[string]reflect.Value) {
	defer func() {
		if recover() != nil {
			globals = map[string]reflect.Value{}
		}
	}()
	return r.i.Globals()
}

// complete answers a complete request: matches for the identifier that ends at cursor (a code
// point offset), and the code point range it replaces.
func (r *runner) complete(code string, cursor int) ([]string, int, int) {
	offset := 0
	for i := 0; i < cursor && offset < len(code); i++ {
		_, size := utf8.DecodeRuneInString(code[offset:])
		offset += size
	}
	before := code[:offset]
	prefixStart := identifierStart(before)
	prefix := before[prefixStart:]
	cursor = utf8.RuneCountInString(before)
	start := cursor - utf8.RuneCountInString(prefix)

	var candidates []string
	if prefixStart > 0 && before[prefixStart-1] == '.' {
		qualifier := before[identifierStart(before[:prefixStart-1]) : prefixStart-1]
		if qualifier == "" {
			return []string{}, start, cursor
		}
		candidates = r.members(qualifier)
	} else {
		if prefix == "" {
			return []string{}, start, cursor
		}
		candidates = r.topLevelNames()
	}
	seen := map[string]bool{}
	matches := []string{}
	for _, c := range candidates {
		if strings.HasPrefix(c, prefix) && !seen[c] {
			seen[c] = true
			matches = append(matches, c)
		}
	}
	sort.Strings(matches)
	return matches, start, cursor
}

func identifierStart(text string) int {
	i := len(text)
	for i > 0 {
		c, size := utf8.DecodeLastRuneInString(text[:i])
		if c != '_' && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			break
		}
		i -= size
	}
	return i
}

func (r *runner) topLevelNames() []string {
	var names []string
	for tok := token.BREAK; tok <= token.VAR; tok++ {
		if tok.IsKeyword() {
			names = append(names, tok.String())
		}
	}
	names = append(names, predeclared...)
	for name := range r.packageNames() {
		names = append(names, name)
	}
	for name := range r.declared {
		names = append(names, name)
	}
	for name := range r.globals() {
		names = append(names, name)
	}
	return names
}

// members are the exported names of a package, or the fields and methods of a global's value.
func (r *runner) members(qualifier string) []string {
	if value, ok := r.globals()[qualifier]; ok && value.IsValid() {
		return valueMembers(value)
	}
	importPath, ok := r.packageNames()[qualifier]
	if !ok {
		return nil
	}
	var names []string
	for key, symbols := range r.exports {
		if path.Dir(key) == importPath {
			for name := range symbols {
				names = append(names, name)
			}
		}
	}
	if names == nil {
		names = r.sourcePackageNames(importPath)
	}
	return names
}

// sourcePackageNames lists what a package interpreted from source (from GOPATH) exports.
func (r *runner) sourcePackageNames(importPath string) (names []string) {
	defer func() {
		if recover() != nil {
			names = nil
		}
	}()
	for _, symbols := range r.i.Symbols(importPath) {
		for name := range symbols {
			names = append(names, name)
		}
	}
	return names
}

func valueMembers(value reflect.Value) []string {
	for value.Kind() == reflect.Interface && !value.IsNil() {
		value = value.Elem()
	}
	t := value.Type()
	var names []string
	for i := 0; i < t.NumMethod(); i++ {
		names = append(names, t.Method(i).Name)
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	} else if pt := reflect.PointerTo(t); pt.NumMethod() > t.NumMethod() {
		for i := 0; i < pt.NumMethod(); i++ {
			names = append(names, pt.Method(i).Name)
		}
	}
	if t.Kind() == reflect.Struct {
		for i := 0; i < t.NumField(); i++ {
			if field := t.Field(i); field.IsExported() {
				names = append(names, field.Name)
			}
		}
	}
	return names
}

// variables lists the global variables and constants of the cells, with their types and a
// short text of their values (at most maxRepr characters).
func (r *runner) variables(maxRepr int) []map[string]interface{} {
	if maxRepr <= 0 {
		maxRepr = 200
	}
	globals := r.globals()
	names := make([]string, 0, len(globals))
	for name := range globals {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]map[string]interface{}, 0, len(names))
	for _, name := range names {
		value := globals[name]
		typeName, repr := "invalid", "<no value>"
		if value.IsValid() {
			typeName = value.Type().String()
			if value.CanInterface() {
				repr = valueText(value.Interface())
			}
			if value.Kind() == reflect.Interface && !value.IsNil() {
				typeName = value.Elem().Type().String()
			}
		}
		if utf8.RuneCountInString(repr) > maxRepr {
			runes := []rune(repr)
			repr = string(runes[:maxRepr-1]) + "…"
		}
		out = append(out, map[string]interface{}{"name": name, "type": typeName, "repr": repr})
	}
	return out
}
