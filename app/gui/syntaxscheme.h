// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QColor>
#include <QPalette>

#include <optional>

class QsciLexer;

namespace replhost::gui {

// The editor's syntax colours: each style of each QScintilla lexer the workbench uses is given a
// role, and each role a colour per theme (light or dark palette), chosen for a contrast of at
// least 4.5:1 (WCAG AA) against the palette's base colour. No style keeps QScintilla's own
// colours, which were designed for white paper and include yellow on white. GUI thread only.
class SyntaxScheme {
public:
    enum class Role {
        Text,        // plain text, identifiers, operators
        Comment,
        DocComment,  // documentation comments, POD
        Keyword,
        String,
        Escape,      // escape sequences, interpolated variables inside strings
        Number,
        TypeName,    // class names, types, a second keyword set
        Function,    // function names, builtins
        Annotation,  // decorators, preprocessor lines
        Variable,    // $scalar, @array, %hash, shell parameters
        Command,     // shell command substitution and Perl backticks
        Regex,
        Error,
    };

    // The role of `style` in `lexer`, or nothing when the workbench has not chosen one for it
    // (a style a newer QScintilla added): the editor then shows it as plain text.
    static std::optional<Role> role(const QsciLexer &lexer, int style);

    static QColor colour(Role role, const QPalette &palette);

    // Gives every described style of `lexer` its role's colour on `palette`'s base colour.
    static void apply(QsciLexer &lexer, const QPalette &palette);
};

} // namespace replhost::gui
