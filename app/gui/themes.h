// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QColor>
#include <QPalette>
#include <QString>

namespace replhost::gui {

// The workbench's colours. "system" keeps the platform's palette (dark included); "light" and
// "dark" install Fusion palettes. Everything the workbench paints itself (output, editor styles)
// derives its colours from the active palette through these functions (the editor's syntax
// colours through SyntaxScheme), so it stays readable whichever theme is on. GUI thread only.
class Themes {
public:
    static QStringList names() { return {QStringLiteral("system"), QStringLiteral("light"), QStringLiteral("dark")}; }

    // Applies a theme to the running QApplication. Unknown names act as "system".
    static void apply(const QString &name);

    static bool isDark(const QPalette &palette);

    // Foreground colours for output on `palette`'s base colour.
    static QColor stderrColour(const QPalette &palette);
    static QColor errorColour(const QPalette &palette);
    static QColor errorBackground(const QPalette &palette);
    static QColor mutedColour(const QPalette &palette);
    static QColor resultColour(const QPalette &palette);
};

} // namespace replhost::gui
