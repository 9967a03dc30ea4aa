// SPDX-License-Identifier: Apache-2.0

package main

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
)

// A cell is split into pieces because yaegi parses source that starts with a declaration as a
// file (where statements are not allowed) and anything else as the body of a function (where
// func, type and import declarations are not allowed). Consecutive declarations stay together,
// so that they may refer to each other in any order; each statement is a piece of its own, as
// yaegi's REPL reads them: a statement is compiled once those before it have run, and its
// errors are about it alone. A trailing expression statement's value is the result.

type pieceKind int

const (
	declPiece  pieceKind = iota // import, type, const, var and func declarations
	stmtPiece                   // a statement, run in the global scope
	valuePiece                  // the final expression statement, whose value is the result
)

// piece is a top-level statement, or a run of declarations, as a byte range of the cell.
type piece struct {
	kind            pieceKind
	imports         bool // a declPiece of import declarations only
	start, end      int
	line, col       int // where start is in the cell, 1-based (col in bytes, as Go counts)
	endLine, endCol int // where end is
}

type scannedToken struct {
	tok        token.Token
	start, end int
	explicit   bool // a semicolon written in the source, not inserted at a line end
}

// splitCell cuts src into pieces; the error lists what the scanner could not read, at
// positions in the file called name.
func splitCell(src, name string) ([]piece, error) {
	fset := token.NewFileSet()
	file := fset.AddFile(name, -1, len(src))
	var errs scanner.ErrorList
	var s scanner.Scanner
	s.Init(file, []byte(src), func(pos token.Position, msg string) { errs.Add(pos, msg) }, 0)

	var tokens []scannedToken
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		start := file.Offset(pos)
		end := start + len(lit)
		if lit == "" {
			end = start + len(tok.String())
		}
		tokens = append(tokens, scannedToken{tok: tok, start: start, end: end, explicit: lit == ";"})
	}
	if errs.Len() > 0 {
		errs.Sort()
		return nil, errs
	}

	// Statements end at semicolons outside brackets, except those of the header of an if, for
	// or switch statement ("for i := 0; i < n; i++ {"), which ends with its first block.
	var statements [][]scannedToken
	depth, first, header := 0, 0, false
	for i, t := range tokens {
		switch t.tok {
		case token.IF, token.FOR, token.SWITCH:
			if depth == 0 {
				header = true
			}
		case token.LPAREN, token.LBRACK, token.LBRACE:
			depth++
		case token.RPAREN, token.RBRACK, token.RBRACE:
			if depth > 0 {
				depth--
			}
			if depth == 0 && t.tok == token.RBRACE {
				header = false
			}
		case token.SEMICOLON:
			if depth == 0 && !(header && t.explicit) {
				if i > first {
					statements = append(statements, tokens[first:i])
				}
				first = i + 1
			}
		}
	}
	if first < len(tokens) {
		statements = append(statements, tokens[first:])
	}

	var pieces []piece
	for i, stmt := range statements {
		kind := stmtPiece
		switch stmt[0].tok {
		case token.PACKAGE:
			// A "package main" clause is allowed and means nothing here.
			continue
		case token.IMPORT, token.TYPE, token.CONST, token.VAR:
			kind = declPiece
		case token.FUNC:
			if isFuncDeclaration(stmt) {
				kind = declPiece
			}
		}
		start, end := stmt[0].start, stmt[len(stmt)-1].end
		if kind == stmtPiece && i == len(statements)-1 && isValueExpression(src[start:end]) {
			kind = valuePiece
		}
		imports := stmt[0].tok == token.IMPORT
		last := file.Position(file.Pos(end))
		// Go wants imports before other declarations in a file; in a cell they may be anywhere.
		if n := len(pieces); n > 0 && kind == declPiece && pieces[n-1].kind == declPiece &&
			pieces[n-1].imports == imports {
			pieces[n-1].end, pieces[n-1].endLine, pieces[n-1].endCol = end, last.Line, last.Column
			continue
		}
		first := file.Position(file.Pos(start))
		pieces = append(pieces, piece{kind: kind, imports: imports, start: start, end: end,
			line: first.Line, col: first.Column, endLine: last.Line, endCol: last.Column})
	}
	return pieces, nil
}

// isFuncDeclaration tells `func f() {}` and `func (r T) m() {}` from a function literal
// statement such as `func() { ... }()`.
func isFuncDeclaration(stmt []scannedToken) bool {
	if len(stmt) < 2 {
		return false
	}
	if stmt[1].tok == token.IDENT {
		return true
	}
	if stmt[1].tok != token.LPAREN {
		return false
	}
	depth := 0
	for i := 1; i < len(stmt); i++ {
		switch stmt[i].tok {
		case token.LPAREN:
			depth++
		case token.RPAREN:
			depth--
			if depth == 0 {
				// A receiver is followed by the method's name.
				return i+1 < len(stmt) && stmt[i+1].tok == token.IDENT
			}
		}
	}
	return false
}

// isValueExpression says whether a statement is an expression whose value is worth showing:
// printing calls return byte counts nobody asked for, so they give no result (as print() in
// Python).
func isValueExpression(text string) bool {
	expr, err := parser.ParseExpr(text)
	if err != nil {
		return false
	}
	for {
		paren, ok := expr.(*ast.ParenExpr)
		if !ok {
			break
		}
		expr = paren.X
	}
	call, ok := expr.(*ast.CallExpr)
	if !ok {
		return true
	}
	switch fun := call.Fun.(type) {
	case *ast.Ident:
		return fun.Name != "print" && fun.Name != "println" && fun.Name != "display"
	case *ast.SelectorExpr:
		pkg, ok := fun.X.(*ast.Ident)
		if !ok {
			return true
		}
		switch pkg.Name + "." + fun.Sel.Name {
		case "fmt.Print", "fmt.Printf", "fmt.Println", "fmt.Fprint", "fmt.Fprintf",
			"fmt.Fprintln", "log.Print", "log.Printf", "log.Println", "replhost.Display":
			return false
		}
	}
	return true
}
