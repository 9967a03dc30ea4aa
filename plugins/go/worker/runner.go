// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/scanner"
	"go/token"
	"path"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/traefik/yaegi/interp"
	"github.com/traefik/yaegi/stdlib"
	stdsyscall "github.com/traefik/yaegi/stdlib/syscall"
	"github.com/traefik/yaegi/stdlib/unrestricted"
)

// helperFile names the source of the helpers every context starts with; its frames are left
// out of tracebacks.
const helperFile = "<replhost>"

// The helpers, as ordinary interpreted code so that a cell may redefine them.
const helperSource = `package main
func display(mime string, data interface{}) { replhost.Display(mime, data) }
`

// runner owns one yaegi interpreter and runs cells in it. Only the driver's main goroutine
// calls it; the interpreter runs each piece of a cell on a goroutine of its own.
type runner struct {
	i       *interp.Interpreter
	exports interp.Exports
	stderr  *stderrFilter

	imported map[string]bool   // "name path" of every import a cell made
	types    map[string]string // type name -> its declaration, as printed by go/printer
	methods  map[string]string // "Type.Method" -> its declaration
	declared map[string]bool   // top-level names cells declared (completion)
	// A position in helperFile, for code the worker adds around a cell's (its frames are then
	// left out of tracebacks like the helpers').
	helperPos token.Pos
}

func newRunner(gopath string) (*runner, error) {
	// Before Use: the interpreter keeps the function values it is given.
	stdlib.Symbols["time/time"]["Sleep"] = reflect.ValueOf(interruptibleSleep)
	// Unrestricted symbols must come after stdlib and syscall, which they override.
	sets := []interp.Exports{stdlib.Symbols, stdsyscall.Symbols, unrestricted.Symbols, helperExports}
	exports := interp.Exports{}
	for _, set := range sets {
		for pkg, symbols := range set {
			merged := exports[pkg]
			if merged == nil {
				merged = map[string]reflect.Value{}
				exports[pkg] = merged
			}
			for name, value := range symbols {
				merged[name] = value
			}
		}
	}

	stderr := &stderrFilter{}
	// Unrestricted: os.Setenv, os.Chdir, os/exec and os.Exit are the real ones, so env layers
	// and the working directory reach child processes. Stdout stays the process's fd 1 (yaegi
	// then writes fmt.Print output there directly); Stderr is only where yaegi reports panics
	// and where the log package writes, which the filter passes on to fd 2.
	i := interp.New(interp.Options{
		GoPath:       gopath,
		Stderr:       stderr,
		Args:         []string{"main"},
		Unrestricted: true,
	})
	for _, set := range sets {
		if err := i.Use(set); err != nil {
			return nil, err
		}
	}
	// Every package given to Use becomes importable by its name without an import, as in
	// yaegi's own REPL ("fmt.Println" just works).
	i.ImportUsed()
	// Compiling anything gives the interpreter its default input name, without which a failed
	// source import is reported as "package location <cwd> not in GOPATH" instead of as the
	// package that was not found.
	if _, err := i.Compile("package main"); err != nil {
		return nil, err
	}

	r := &runner{
		i:        i,
		exports:  exports,
		stderr:   stderr,
		imported: map[string]bool{},
		types:    map[string]string{},
		methods:  map[string]string{},
		declared: map[string]bool{},
	}
	file, err := parser.ParseFile(i.FileSet(), helperFile, helperSource, 0)
	if err != nil {
		return nil, err
	}
	if _, err := r.compileAndRun(context.Background(), file); err != nil {
		return nil, fmt.Errorf("cannot define the helpers: %v", err)
	}
	r.helperPos = file.Package
	return r, nil
}

// cellOutcome is how a cell ended, with the result or error event to send (without ids).
type cellOutcome struct {
	status string // "ok", "error" or "interrupted"
	event  event  // nil, a result or an error
}

// parsedPiece is a piece of a cell ready for the interpreter.
type parsedPiece struct {
	piece
	node ast.Node
}

// runCell runs one cell: its pieces (see cell.go) are compiled and run in order, so an error
// stops the cell with what came before it done, as in a script. A syntax error anywhere stops
// the cell before anything runs. ctx cancelled means interrupted.
func (r *runner) runCell(ctx context.Context, code string, count int) cellOutcome {
	name := cellFileName(count)
	pieces, err := splitCell(code, name)
	if err != nil {
		return syntaxError(err)
	}
	parsed := make([]parsedPiece, 0, len(pieces))
	declaresMain := false
	for _, p := range pieces {
		node, err := r.parsePiece(code, p, name, p.kind)
		if err != nil && p.kind == valuePiece {
			// An expression the wrapper cannot hold (a type, say): leave the error to the compiler.
			p.kind = stmtPiece
			node, err = r.parsePiece(code, p, name, stmtPiece)
		}
		if err != nil {
			return syntaxError(err)
		}
		declaresMain = renameMain(node) || declaresMain
		parsed = append(parsed, parsedPiece{piece: p, node: node})
	}

	r.stderr.begin()
	defer r.stderr.end()
	outcome := cellOutcome{status: "ok"}
	for _, p := range parsed {
		if ctx.Err() != nil {
			return interruptedOutcome()
		}
		if p.kind == declPiece {
			if err := r.prepareDeclarations(p.node.(*ast.File)); err != nil {
				return cellOutcome{status: "error", event: compileErrorEvent(err)}
			}
		}
		value, err := r.compileAndRun(ctx, p.node)
		if err != nil && p.kind == valuePiece && isCompileError(err) {
			// A call of a function without results cannot be an argument: run it as a statement.
			plain, perr := r.parsePiece(code, p.piece, name, stmtPiece)
			if perr != nil {
				return syntaxError(perr)
			}
			renameMain(plain)
			p.kind = stmtPiece
			value, err = r.compileAndRun(ctx, plain)
		}
		if err != nil {
			return r.failure(ctx, err)
		}
		if p.kind == declPiece {
			r.recordDeclarations(p.node.(*ast.File))
		}
		if p.kind == valuePiece && value.IsValid() {
			// A lone nil (the error of a call that succeeded) is shown as nothing, like None in
			// Python.
			values, ok := value.Interface().([]interface{})
			if ok && !(len(values) == 1 && values[0] == nil) {
				data, metadata := valueBundle(values)
				outcome.event = event{"type": "result", "execution_count": count, "data": data,
					"metadata": metadata}
			}
		}
	}
	if declaresMain {
		// As `go run` does, once everything else is declared.
		call, err := parser.ParseFile(r.i.FileSet(), helperFile, "package main; func main() {"+mainName+"()\n}", 0)
		if err == nil {
			_, err = r.compileAndRun(ctx, call.Decls[0].(*ast.FuncDecl).Body)
		}
		if err != nil {
			return r.failure(ctx, err)
		}
	}
	if ctx.Err() != nil {
		return interruptedOutcome()
	}
	return outcome
}

// failure is the outcome of a cell that a piece ended with err.
func (r *runner) failure(ctx context.Context, err error) cellOutcome {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return interruptedOutcome()
	}
	return cellOutcome{status: "error", event: r.errorEvent(err)}
}

// mainName is what a cell's func main is called in the interpreter: yaegi runs a function
// called main after compiling anything once one exists, so a program pasted into a cell would
// run again with every later piece of code. Calls main() are renamed too; other uses of the
// name (a func value) are not.
const mainName = "replhostMain"

// renameMain renames a top-level func main of a piece, and the calls of main in it, and says
// whether the piece declares it.
func renameMain(node ast.Node) bool {
	declares := false
	if file, ok := node.(*ast.File); ok {
		for _, decl := range file.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "main" {
				fn.Name.Name = mainName
				declares = true
			}
		}
	}
	ast.Inspect(node, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if ident, ok := call.Fun.(*ast.Ident); ok && ident.Name == "main" {
				ident.Name = mainName
			}
		}
		return true
	})
	return declares
}

// cellFileName is the file name of a cell's code. yaegi keys imports by the base name of the
// file they appear in, and its REPL calls every input "_.go", so that imports persist from one
// input to the next (and packages ImportUsed could not give their short names, like math/rand,
// are math_rand there). Cells keep that base name, and the directory says which cell it was;
// cellPositions shows it as "In[3]".
func cellFileName(count int) string {
	return "In[" + strconv.Itoa(count) + "]/" + interp.DefaultSourceName
}

var cellFilePattern = regexp.MustCompile(`(In\[-?\d+\])/` + regexp.QuoteMeta(interp.DefaultSourceName) + `:`)

// cellPositions rewrites positions in a message from "In[3]/_.go:2:5" to "In[3]:2:5".
func cellPositions(text string) string {
	return cellFilePattern.ReplaceAllString(text, "$1:")
}

// parsePiece parses a piece the way yaegi's REPL would see it, with a line directive so that
// positions in errors and panics are those of the cell.
func (r *runner) parsePiece(code string, p piece, name string, kind pieceKind) (ast.Node, error) {
	// A relative file name in a line directive is taken in the directory of the file it is in,
	// so this names the same file as `name`.
	directive := "/*line " + interp.DefaultSourceName + ":" + strconv.Itoa(p.line) + ":" +
		strconv.Itoa(p.col) + "*/"
	text := code[p.start:p.end]
	var src string
	switch kind {
	case declPiece:
		src = "package main;" + directive + text
	case stmtPiece:
		src = "package main; func main() {" + directive + text + "\n}"
	case valuePiece:
		src = "package main; func main() {replhost.CellValues(" + directive + text + ")\n}"
	}
	file, err := parser.ParseFile(r.i.FileSet(), name, src, parser.DeclarationErrors)
	if err != nil {
		return nil, atEndOfPiece(err, p)
	}
	if kind == declPiece {
		return file, nil
	}
	if len(file.Decls) != 1 {
		return nil, fmt.Errorf("%s:%d:%d: unexpected declaration", name, p.line, p.col)
	}
	fn, ok := file.Decls[0].(*ast.FuncDecl)
	if !ok || fn.Body == nil {
		return nil, fmt.Errorf("%s:%d:%d: unexpected declaration", name, p.line, p.col)
	}
	if kind == stmtPiece {
		scopeCompoundStatements(fn.Body, r.helperPos)
	}
	return fn.Body, nil
}

// scopeCompoundStatements puts each if, for, switch, select and block statement of a piece in a
// function literal called at once. yaegi runs a piece's statements in the global scope, and
// there a `:=` in such a statement's header or body assigns a global of the same name instead
// of declaring a variable of its own (`var i = "s"` then `for i := 0; i < 3; i++ {}` stored 3
// in the global, and `if v := 1; v > 0 {}` left a global v behind); inside a function yaegi
// scopes them as Go does. The statement keeps its positions, so errors point into the cell; the
// literal and its call are at `at`, a position of the worker's own, kept out of tracebacks.
func scopeCompoundStatements(body *ast.BlockStmt, at token.Pos) {
	for i, stmt := range body.List {
		inner := stmt
		if labeled, ok := stmt.(*ast.LabeledStmt); ok {
			inner = labeled.Stmt
		}
		switch inner.(type) {
		case *ast.ForStmt, *ast.RangeStmt, *ast.IfStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt,
			*ast.SelectStmt, *ast.BlockStmt:
		default:
			continue
		}
		body.List[i] = &ast.ExprStmt{X: &ast.CallExpr{
			Fun: &ast.FuncLit{
				Type: &ast.FuncType{Func: at, Params: &ast.FieldList{Opening: at, Closing: at}},
				Body: &ast.BlockStmt{Lbrace: at, List: []ast.Stmt{stmt}, Rbrace: at},
			},
			Lparen: at, Rparen: at,
		}}
	}
}

// atEndOfPiece moves errors found in what parsePiece added after the piece (the closing
// brace of the function around statements) to the end of the piece: "expected operand, found
// '}'" there means the cell ended too early.
func atEndOfPiece(err error, p piece) error {
	var list scanner.ErrorList
	if !errors.As(err, &list) {
		return err
	}
	for _, e := range list {
		if e.Pos.Line > p.endLine || (e.Pos.Line == p.endLine && e.Pos.Column > p.endCol) {
			e.Pos.Line, e.Pos.Column = p.endLine, p.endCol
			msg := strings.TrimSuffix(strings.TrimSuffix(e.Msg, ", found '}'"), ", found 'EOF'")
			e.Msg = "unexpected end of the cell: " + msg
		}
	}
	return list
}

// compileAndRun compiles a node and runs it; a cancelled ctx stops it (see waitForAbandonedRun).
func (r *runner) compileAndRun(ctx context.Context, node ast.Node) (value reflect.Value, err error) {
	program, err := r.compile(node)
	if err != nil || program == nil {
		return reflect.Value{}, err
	}
	if ctx.Err() != nil {
		return reflect.Value{}, ctx.Err()
	}
	value, err = r.i.ExecuteWithContext(ctx, program)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		waitForAbandonedRun()
	}
	return value, err
}

// compileError marks errors found before anything ran.
type compileError struct{ err error }

func (e *compileError) Error() string { return e.err.Error() }

func isCompileError(err error) bool {
	var ce *compileError
	return errors.As(err, &ce)
}

func (r *runner) compile(node ast.Node) (program *interp.Program, err error) {
	defer func() {
		// yaegi's compiler panics on some code it does not support (generic type inference).
		if v := recover(); v != nil {
			program, err = nil, &compileError{fmt.Errorf("the Go interpreter cannot compile this code: %v", v)}
		}
	}()
	program, err = r.i.CompileAST(node)
	if err != nil {
		return nil, &compileError{err}
	}
	return program, nil
}

// prepareDeclarations drops imports a cell already made (yaegi refuses a second import of a
// package, so running a cell again would fail) and refuses to change a type or a method: yaegi
// keeps the first definition and silently ignores later ones, which would leave code running
// against a type other than the one on screen.
func (r *runner) prepareDeclarations(file *ast.File) error {
	fset := r.i.FileSet()
	decls := file.Decls[:0]
	for _, decl := range file.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				specs := d.Specs[:0]
				for _, spec := range d.Specs {
					if !r.imported[importKey(spec.(*ast.ImportSpec))] {
						specs = append(specs, spec)
					}
				}
				d.Specs = specs
				if len(specs) == 0 {
					continue
				}
			}
			if d.Tok == token.TYPE {
				for _, spec := range d.Specs {
					ts := spec.(*ast.TypeSpec)
					if old, ok := r.types[ts.Name.Name]; ok && old != printNode(fset, ts) {
						return fmt.Errorf("%s: type %s is already declared in this context with another definition; "+
							"the Go interpreter cannot change a type once it is declared: give the new type another "+
							"name, or restart the context (its state is lost)", fset.Position(ts.Pos()), ts.Name.Name)
					}
				}
			}
		case *ast.FuncDecl:
			if key := methodKey(d); key != "" {
				if old, ok := r.methods[key]; ok && old != printNode(fset, d) {
					return fmt.Errorf("%s: method %s is already declared in this context with another definition; "+
						"the Go interpreter cannot change a method once it is declared: give it another name, "+
						"or restart the context (its state is lost)", fset.Position(d.Pos()), key)
				}
			}
		}
		decls = append(decls, decl)
	}
	file.Decls = decls
	file.Imports = file.Imports[:0]
	for _, decl := range decls {
		if d, ok := decl.(*ast.GenDecl); ok && d.Tok == token.IMPORT {
			for _, spec := range d.Specs {
				file.Imports = append(file.Imports, spec.(*ast.ImportSpec))
			}
		}
	}
	return nil
}

// recordDeclarations notes what a declaration piece that compiled has declared.
func (r *runner) recordDeclarations(file *ast.File) {
	fset := r.i.FileSet()
	for _, decl := range file.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.ImportSpec:
					r.imported[importKey(s)] = true
				case *ast.TypeSpec:
					r.types[s.Name.Name] = printNode(fset, s)
					r.declared[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						r.declared[n.Name] = true
					}
				}
			}
		case *ast.FuncDecl:
			if key := methodKey(d); key != "" {
				r.methods[key] = printNode(fset, d)
			} else {
				r.declared[d.Name.Name] = true
			}
		}
	}
}

func importKey(spec *ast.ImportSpec) string {
	importPath, _ := strconv.Unquote(spec.Path.Value)
	name := path.Base(importPath)
	if spec.Name != nil {
		name = spec.Name.Name
	}
	return name + " " + importPath
}

// methodKey is "Type.Method" for a method declaration, "" for a function.
func methodKey(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return ""
	}
	recv := d.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	if index, ok := recv.(*ast.IndexExpr); ok {
		recv = index.X
	}
	if ident, ok := recv.(*ast.Ident); ok {
		return ident.Name + "." + d.Name.Name
	}
	return ""
}

func printNode(fset *token.FileSet, node ast.Node) string {
	var buf bytes.Buffer
	if err := printer.Fprint(&buf, fset, node); err != nil {
		return fmt.Sprint(node)
	}
	return buf.String()
}

func interruptedOutcome() cellOutcome {
	return cellOutcome{status: "interrupted", event: event{"type": "error", "ename": "Interrupted",
		"evalue":    "the execution was interrupted",
		"traceback": []string{"Interrupted: the execution was interrupted"}}}
}

func syntaxError(err error) cellOutcome {
	lines := errorLines(err)
	return cellOutcome{status: "error", event: event{"type": "error", "ename": "SyntaxError",
		"evalue": lines[0], "traceback": lines}}
}

func compileErrorEvent(err error) event {
	lines := errorLines(err)
	for i, line := range lines {
		// What yaegi says when a statement declaring with := uses an undefined name, if the
		// statement is not the first of its piece.
		if strings.HasSuffix(line, ": constant definition loop") {
			lines[i] = line + " (a name used in this statement is probably not defined)"
		}
	}
	return event{"type": "error", "ename": "CompileError", "evalue": lines[0], "traceback": lines}
}

func errorLines(err error) []string {
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		lines := make([]string, 0, len(list))
		for _, e := range list {
			lines = append(lines, cellPositions(e.Error()))
		}
		return lines
	}
	return strings.Split(strings.TrimRight(cellPositions(err.Error()), "\n"), "\n")
}

// errorEvent describes what stopped a piece: a compile error, or a panic with the positions
// yaegi reported for each interpreted frame it unwound.
func (r *runner) errorEvent(err error) event {
	if isCompileError(err) {
		return compileErrorEvent(err)
	}
	var p interp.Panic
	if !errors.As(err, &p) {
		return event{"type": "error", "ename": "Error", "evalue": err.Error(),
			"traceback": []string{err.Error()}}
	}
	value := fmt.Sprint(p.Value)
	if e, ok := p.Value.(error); ok {
		value = e.Error()
	}
	traceback := []string{"panic: " + value}
	for _, frame := range r.stderr.frames() {
		if !strings.HasPrefix(frame, helperFile) {
			traceback = append(traceback, "\tat "+cellPositions(frame))
		}
	}
	return event{"type": "error", "ename": "panic", "evalue": value, "traceback": traceback}
}

// stderrFilter is the interpreter's Stderr. yaegi writes one "<position>: panic" line there
// for each interpreted frame a panic unwinds, even when user code recovers the panic further
// up; while a cell runs those lines are kept for its traceback instead. Everything else (the
// log package writes here) goes to fd 2.
type stderrFilter struct {
	mu        sync.Mutex
	capturing bool
	lines     []string
}

var panicLine = regexp.MustCompile(`^(\S.*:\d+:\d+): panic\n$`)

func (w *stderrFilter) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.capturing {
		if m := panicLine.FindSubmatch(p); m != nil {
			if len(w.lines) < 200 {
				w.lines = append(w.lines, string(m[1]))
			}
			w.mu.Unlock()
			return len(p), nil
		}
	}
	w.mu.Unlock()
	writeFd(2, p)
	return len(p), nil
}

func (w *stderrFilter) begin() {
	w.mu.Lock()
	w.capturing, w.lines = true, nil
	w.mu.Unlock()
}

func (w *stderrFilter) end() {
	w.mu.Lock()
	w.capturing, w.lines = false, nil
	w.mu.Unlock()
}

func (w *stderrFilter) frames() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}

// waitForAbandonedRun waits until the goroutine of an interrupted ExecuteWithContext has
// returned. yaegi's cancellation makes ExecuteWithContext return at once and stops the
// interpreted code at its next step, but code inside a compiled call (a child process being
// waited for, a lock) goes on until that call returns, and the next run re-arms the shared
// global frame: if it started first, the rest of the interrupted cell would run after all.
// So the next run waits. A call that never returns keeps the worker busy until the host's
// interrupt ladder kills it, which then reports that the state was lost.
func waitForAbandonedRun() {
	const creator = "created by github.com/traefik/yaegi/interp.(*Interpreter).ExecuteWithContext"
	buf := make([]byte, 1<<16)
	for delay := time.Millisecond; ; {
		n := runtime.Stack(buf, true)
		if n == len(buf) {
			buf = make([]byte, 2*len(buf))
			continue
		}
		if !bytes.Contains(buf[:n], []byte(creator)) {
			return
		}
		time.Sleep(delay)
		if delay < 20*time.Millisecond {
			delay *= 2
		}
	}
}

// sleepContext is the context of the running cell, for interruptibleSleep; never nil.
var sleepContext struct {
	sync.Mutex
	ctx context.Context
}

func setSleepContext(ctx context.Context) {
	sleepContext.Lock()
	sleepContext.ctx = ctx
	sleepContext.Unlock()
}

func currentSleepContext() context.Context {
	sleepContext.Lock()
	defer sleepContext.Unlock()
	if sleepContext.ctx == nil {
		return context.Background()
	}
	return sleepContext.ctx
}

// interruptibleSleep replaces time.Sleep for interpreted code: yaegi cannot stop a compiled
// call, so the sleep itself ends early when the running cell is interrupted (the interpreter
// then stops at its next step).
func interruptibleSleep(d time.Duration) {
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-currentSleepContext().Done():
	}
}
