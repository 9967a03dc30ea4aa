// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QByteArray>
#include <QFont>
#include <QString>

#include <memory>

class QSettings;

namespace replhost::gui {

// The workbench's preferences, kept in QSettings: fonts, theme, default language, server
// autostart and port, the confirmations, the editors' word wrap and whitespace, window layout. Values are read once by load() and written by save(); the
// object itself is a plain value. GUI thread only.
class WorkbenchSettings {
public:
    QFont editorFont;
    QFont outputFont;
    QString theme = QStringLiteral("system");     // Themes::names()
    QString defaultLanguage = QStringLiteral("python");
    bool serverAutostart = false;
    quint16 serverPort = 49999;
    // Restart and delete ask first, until the user ticks "Don't ask again".
    bool askBeforeRestart = true;
    bool askBeforeDelete = true;
    // The editors wrap long lines at word boundaries; they show spaces and tabs as marks.
    bool wordWrap = false;
    bool showWhitespace = false;
    QByteArray windowGeometry;
    QByteArray windowState;

    // `file` empty: the platform's location for organisation "replhost", application "workbench".
    static std::unique_ptr<QSettings> open(const QString &file);
    static WorkbenchSettings load(QSettings &settings);
    void save(QSettings &settings) const;
};

} // namespace replhost::gui
