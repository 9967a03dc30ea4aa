// SPDX-License-Identifier: Apache-2.0
#include "rlexer.h"

#include <Qsci/qsciscintilla.h>

#include <QSet>

namespace replhost::gui {

namespace {

// R's reserved words (?Reserved), the constants among them.
bool isReserved(const QByteArray &word)
{
    static const QSet<QByteArray> words{
        "if", "else", "repeat", "while", "function", "for", "in", "next", "break", "TRUE",
        "FALSE", "NULL", "Inf", "NaN", "NA", "NA_integer_", "NA_real_", "NA_character_",
        "NA_complex_"};
    return words.contains(word);
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Letters of a name: ASCII letters, digits, '.', '_', and every byte of a UTF-8 character.
bool isNameByte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || isDigit(c) || c == '.' || c == '_'
           || (static_cast<unsigned char>(c) & 0x80);
}

bool isHexDigit(char c) { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// The end of the quoted text that starts at `from` (its quote), past the closing quote or at
// the end of `text`.
qsizetype quotedEnd(const QByteArray &text, qsizetype from)
{
    const char quote = text.at(from);
    qsizetype i = from + 1;
    while (i < text.size()) {
        if (text.at(i) == '\\')
            i += 2;
        else if (text.at(i++) == quote)
            return i;
    }
    return text.size();
}

qsizetype numberEnd(const QByteArray &text, qsizetype i)
{
    const qsizetype n = text.size();
    if (text.at(i) == '0' && i + 1 < n && (text.at(i + 1) == 'x' || text.at(i + 1) == 'X')) {
        i += 2;
        while (i < n && isHexDigit(text.at(i)))
            ++i;
    } else {
        while (i < n && (isDigit(text.at(i)) || text.at(i) == '.'))
            ++i;
        if (i < n && (text.at(i) == 'e' || text.at(i) == 'E')) {
            qsizetype j = i + 1;
            if (j < n && (text.at(j) == '+' || text.at(j) == '-'))
                ++j;
            if (j < n && isDigit(text.at(j))) {
                i = j;
                while (i < n && isDigit(text.at(i)))
                    ++i;
            }
        }
    }
    if (i < n && (text.at(i) == 'L' || text.at(i) == 'i'))
        ++i;
    return i;
}

} // namespace

RLexer::RLexer(QObject *parent) : QsciLexerCustom(parent) {}

QString RLexer::description(int style) const
{
    switch (style) {
    case Default: return tr("Default");
    case Comment: return tr("Comment");
    case Number: return tr("Number");
    case String: return tr("String");
    case Keyword: return tr("Reserved word");
    case Function: return tr("Function call");
    default: return QString();
    }
}

void RLexer::styleText(int start, int end)
{
    QsciScintilla *sci = editor();
    if (!sci || end <= start)
        return;
    // A string that runs into this line is styled again from its quote.
    while (start > 0 && sci->SendScintilla(QsciScintilla::SCI_GETSTYLEAT, start - 1) == String)
        --start;
    const QByteArray text = sci->bytes(start, end).chopped(1);  // bytes() adds a terminating NUL
    startStyling(start);
    const qsizetype n = text.size();
    qsizetype i = 0;
    while (i < n) {
        const char c = text.at(i);
        qsizetype next = i + 1;
        int style = Default;
        if (c == '#') {
            next = text.indexOf('\n', i);
            next = next < 0 ? n : next;
            style = Comment;
        } else if (c == '"' || c == '\'') {
            next = quotedEnd(text, i);
            style = String;
        } else if (c == '`') {
            next = quotedEnd(text, i);  // a backquoted name
        } else if (isDigit(c) || (c == '.' && i + 1 < n && isDigit(text.at(i + 1)))) {
            next = numberEnd(text, i);
            style = Number;
        } else if (isNameByte(c)) {
            while (next < n && isNameByte(text.at(next)))
                ++next;
            const QByteArray word = text.mid(i, next - i);
            if (isReserved(word))
                style = Keyword;
            else if (next < n && text.at(next) == '(')
                style = Function;
        }
        setStyling(int(next - i), style);
        i = next;
    }
}

} // namespace replhost::gui
