// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QColor>
#include <QIcon>
#include <QString>

namespace replhost::gui {

// Small painted icons, so the workbench needs no image resources: a coloured badge with a
// language's short name, and a dot for a context's live state. Pure functions; GUI thread.
class LanguageBadge {
public:
    // "Py" on blue for python, "Sh" on green for bash, ...; unknown ids get a grey badge with
    // their first two letters.
    static QIcon icon(const QString &languageId);
    static QString shortName(const QString &languageId);
    static QColor colour(const QString &languageId);

    // idle green, busy amber, starting and restoring blue, dormant grey, dead red; a history
    // row's "interrupted" violet.
    static QIcon stateIcon(const QString &state);
    static QColor stateColour(const QString &state);
};

} // namespace replhost::gui
