// SPDX-License-Identifier: Apache-2.0
#include "syntaxscheme.h"

#include "themes.h"

#include <Qsci/qscilexer.h>

#include <cstring>

namespace replhost::gui {

namespace {

using Role = SyntaxScheme::Role;

// Style numbers are those of Scintilla's lexers (QsciLexerPython::Comment and so on); they are
// written as numbers here so one table reads as one lexer's list.
std::optional<Role> pythonRole(int style)
{
    switch (style) {
    case 0: case 10: case 11: return Role::Text;
    case 1: case 12: return Role::Comment;
    case 2: return Role::Number;
    case 3: case 4: case 6: case 7: case 16: case 17: case 18: case 19: return Role::String;
    case 5: return Role::Keyword;
    case 8: return Role::TypeName;
    case 9: case 14: return Role::Function;
    case 13: return Role::Error;
    case 15: return Role::Annotation;
    default: return std::nullopt;
    }
}

std::optional<Role> bashRole(int style)
{
    switch (style) {
    case 0: case 7: case 8: return Role::Text;
    case 1: return Role::Error;
    case 2: return Role::Comment;
    case 3: return Role::Number;
    case 4: return Role::Keyword;
    case 5: case 6: case 12: case 13: return Role::String;
    case 9: case 10: return Role::Variable;
    case 11: return Role::Command;
    default: return std::nullopt;
    }
}

std::optional<Role> perlRole(int style)
{
    switch (style) {
    case 0: case 10: case 11: return Role::Text;
    case 1: return Role::Error;
    case 2: case 21: return Role::Comment;
    case 3: case 31: return Role::DocComment;
    case 4: return Role::Number;
    case 5: return Role::Keyword;
    case 6: case 7: case 22: case 23: case 24: case 26: case 27: case 30: case 42: return Role::String;
    case 12: case 13: case 14: case 15: return Role::Variable;
    case 17: case 18: case 29: case 44: return Role::Regex;
    case 20: case 25: case 28: return Role::Command;
    case 40: return Role::TypeName;
    case 41: return Role::Function;
    case 43: case 54: case 55: case 57: case 61: case 62: case 64: case 65: case 66: return Role::Escape;
    default: return std::nullopt;
    }
}

// QsciLexerCPP, and so QsciLexerJava and QsciLexerJavaScript; a style plus 64 is the same
// style in inactive preprocessor code.
std::optional<Role> cppRole(int style)
{
    switch (style & ~0x40) {
    case 0: case 10: case 11: return Role::Text;
    case 1: case 2: case 23: return Role::Comment;
    case 3: case 15: case 17: case 24: case 26: return Role::DocComment;
    case 4: case 8: case 25: return Role::Number;
    case 5: return Role::Keyword;
    case 6: case 7: case 13: case 20: case 21: case 22: return Role::String;
    case 9: return Role::Annotation;
    case 12: case 18: return Role::Error;
    case 14: return Role::Regex;
    case 16: case 19: return Role::TypeName;
    case 27: return Role::Escape;
    default: return std::nullopt;
    }
}

// RLexer's styles (rlexer.h).
std::optional<Role> rRole(int style)
{
    switch (style) {
    case 0: return Role::Text;
    case 1: return Role::Comment;
    case 2: return Role::Number;
    case 3: return Role::String;
    case 4: return Role::Keyword;
    case 5: return Role::Function;
    default: return std::nullopt;
    }
}

struct Colours {
    QColor comment, docComment, keyword, string, escape, number, typeName, function, annotation, variable,
            command, regex, error;
};

// Light colours are measured against white, dark ones against the dark theme's #1e1f22.
const Colours kLight{QColor(0x57, 0x60, 0x6a), QColor(0x2e, 0x6e, 0x3c), QColor(0x00, 0x33, 0xb3),
                     QColor(0x06, 0x7d, 0x17), QColor(0x00, 0x37, 0xa6), QColor(0x17, 0x50, 0xeb),
                     QColor(0x00, 0x62, 0x7a), QColor(0x6f, 0x42, 0xc1), QColor(0x7a, 0x5c, 0x00),
                     QColor(0x87, 0x10, 0x94), QColor(0x8a, 0x3d, 0x00), QColor(0xa3, 0x34, 0x1a),
                     QColor(0xb9, 0x1c, 0x1c)};
const Colours kDark{QColor(0x8f, 0x93, 0x9a), QColor(0x7f, 0xaf, 0x86), QColor(0xcf, 0x8e, 0x6d),
                    QColor(0x6a, 0xab, 0x73), QColor(0xe3, 0x9d, 0x5c), QColor(0x2a, 0xac, 0xb8),
                    QColor(0x4f, 0xc1, 0xb8), QColor(0x56, 0xa8, 0xf5), QColor(0xb3, 0xae, 0x60),
                    QColor(0xc7, 0x7d, 0xbb), QColor(0xe6, 0xb6, 0x73), QColor(0xe0, 0x95, 0x7c),
                    QColor(0xff, 0x7b, 0x72)};

} // namespace

std::optional<SyntaxScheme::Role> SyntaxScheme::role(const QsciLexer &lexer, int style)
{
    const char *name = lexer.lexer();
    if (name == nullptr)  // a lexer of the workbench's own, which Scintilla does not know
        return std::strcmp(lexer.language(), "R") == 0 ? rRole(style) : std::nullopt;
    if (std::strcmp(name, "python") == 0)
        return pythonRole(style);
    if (std::strcmp(name, "bash") == 0)
        return bashRole(style);
    if (std::strcmp(name, "perl") == 0)
        return perlRole(style);
    if (std::strcmp(name, "cpp") == 0)
        return cppRole(style);
    return std::nullopt;
}

QColor SyntaxScheme::colour(Role role, const QPalette &palette)
{
    const Colours &c = Themes::isDark(palette) ? kDark : kLight;
    switch (role) {
    case Role::Text: return palette.color(QPalette::Text);
    case Role::Comment: return c.comment;
    case Role::DocComment: return c.docComment;
    case Role::Keyword: return c.keyword;
    case Role::String: return c.string;
    case Role::Escape: return c.escape;
    case Role::Number: return c.number;
    case Role::TypeName: return c.typeName;
    case Role::Function: return c.function;
    case Role::Annotation: return c.annotation;
    case Role::Variable: return c.variable;
    case Role::Command: return c.command;
    case Role::Regex: return c.regex;
    case Role::Error: return c.error;
    }
    return palette.color(QPalette::Text);
}

void SyntaxScheme::apply(QsciLexer &lexer, const QPalette &palette)
{
    const QColor base = palette.color(QPalette::Base);
    const QColor text = palette.color(QPalette::Text);
    lexer.setDefaultPaper(base);
    lexer.setPaper(base, -1);
    lexer.setDefaultColor(text);
    for (int style = 0; style < 128; ++style) {
        if (lexer.description(style).isEmpty())
            continue;
        lexer.setColor(colour(role(lexer, style).value_or(Role::Text), palette), style);
        lexer.setPaper(base, style);
        lexer.setEolFill(false, style);
    }
}

} // namespace replhost::gui
