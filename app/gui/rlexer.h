// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <Qsci/qscilexercustom.h>

namespace replhost::gui {

// R for the editor, which QScintilla has no lexer for: comments, strings (over several lines,
// with escapes), numbers (hexadecimal, exponents, the L and i suffixes), R's reserved words and
// the names of called functions. Backquoted names are names. Styling starts at the line Scintilla
// asks for, or earlier at the start of a string that runs into it. GUI thread only.
class RLexer : public QsciLexerCustom {
    Q_OBJECT
public:
    enum Style { Default = 0, Comment = 1, Number = 2, String = 3, Keyword = 4, Function = 5 };

    explicit RLexer(QObject *parent = nullptr);

    const char *language() const override { return "R"; }
    QString description(int style) const override;
    void styleText(int start, int end) override;
};

} // namespace replhost::gui
