// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QList>
#include <QString>
#include <QStringList>
#include <QStringView>

namespace replhost::gui {

// Run units of the editor: cells delimited by marker lines, as Spyder, VS Code and Jupyter's
// exported scripts write them — a line comment of the language followed by "%%" or "In[…]":
// "#%%", "# %%", "# %% title", "# In[ ]:", "# In[3]:" in Python, Perl or Bash; "// %%" and
// "// In[ ]" in JavaScript, Java or Go. Leading blanks are allowed before the comment.
//
// Plain functions of the text; the editor draws and runs what they find.
namespace Cells {

struct Cell {
    int first = 0;   // first line (the marker line, if the cell has one), 0-based
    int last = 0;    // last line, inclusive
    bool hasMarker = false;
};

// The line comment of a lexer hint ("#" or "//"); empty for plain text, which has no cells.
QString commentPrefix(const QString &lexerHint);

bool isMarker(QStringView line, const QString &commentPrefix);

// The cells of `lines`: one per marker, plus the lines before the first marker when there are
// any; a text without markers is one cell. Never empty (an empty text is one cell of line 0).
QList<Cell> split(const QStringList &lines, const QString &commentPrefix);

// The cell that holds `line`.
Cell at(const QList<Cell> &cells, int line);

} // namespace Cells

} // namespace replhost::gui
