// SPDX-License-Identifier: Apache-2.0
#include "wholelines.h"

namespace replhost::http {

QList<WholeLines::Piece> WholeLines::add(const QString &stream, const QString &text)
{
    QList<Piece> pieces;
    if (stream != m_stream) {
        if (std::optional<Piece> held = take())
            pieces.append(std::move(*held));
        m_stream = stream;
    }
    m_text += text;
    const qsizetype end = m_text.lastIndexOf(QLatin1Char('\n')) + 1;
    if (end > 0) {
        pieces.append({stream, m_text.left(end)});
        m_text.remove(0, end);
    }
    return pieces;
}

std::optional<WholeLines::Piece> WholeLines::take()
{
    if (m_text.isEmpty())
        return std::nullopt;
    Piece piece{m_stream, m_text};
    m_text.clear();
    return piece;
}

} // namespace replhost::http
