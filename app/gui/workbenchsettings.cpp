// SPDX-License-Identifier: Apache-2.0
#include "workbenchsettings.h"

#include <QFontDatabase>
#include <QSettings>

namespace replhost::gui {

std::unique_ptr<QSettings> WorkbenchSettings::open(const QString &file)
{
    if (file.isEmpty())
        return std::make_unique<QSettings>(QStringLiteral("replhost"), QStringLiteral("workbench"));
    return std::make_unique<QSettings>(file, QSettings::IniFormat);
}

WorkbenchSettings WorkbenchSettings::load(QSettings &settings)
{
    WorkbenchSettings s;
    QFont fixed = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    if (fixed.pointSize() > 0 && fixed.pointSize() < 10)
        fixed.setPointSize(10);
    s.editorFont = fixed;
    s.outputFont = fixed;
    if (settings.contains(QStringLiteral("fonts/editor")))
        s.editorFont.fromString(settings.value(QStringLiteral("fonts/editor")).toString());
    if (settings.contains(QStringLiteral("fonts/output")))
        s.outputFont.fromString(settings.value(QStringLiteral("fonts/output")).toString());
    s.theme = settings.value(QStringLiteral("appearance/theme"), s.theme).toString();
    s.defaultLanguage = settings.value(QStringLiteral("contexts/defaultLanguage"), s.defaultLanguage).toString();
    s.serverAutostart = settings.value(QStringLiteral("server/autostart"), s.serverAutostart).toBool();
    const uint port = settings.value(QStringLiteral("server/port"), s.serverPort).toUInt();
    s.serverPort = port <= 65535 ? quint16(port) : s.serverPort;
    s.askBeforeRestart = settings.value(QStringLiteral("confirm/restart"), s.askBeforeRestart).toBool();
    s.askBeforeDelete = settings.value(QStringLiteral("confirm/delete"), s.askBeforeDelete).toBool();
    s.wordWrap = settings.value(QStringLiteral("editor/wordWrap"), s.wordWrap).toBool();
    s.showWhitespace = settings.value(QStringLiteral("editor/showWhitespace"), s.showWhitespace).toBool();
    s.windowGeometry = settings.value(QStringLiteral("window/geometry")).toByteArray();
    s.windowState = settings.value(QStringLiteral("window/state")).toByteArray();
    return s;
}

void WorkbenchSettings::save(QSettings &settings) const
{
    settings.setValue(QStringLiteral("fonts/editor"), editorFont.toString());
    settings.setValue(QStringLiteral("fonts/output"), outputFont.toString());
    settings.setValue(QStringLiteral("appearance/theme"), theme);
    settings.setValue(QStringLiteral("contexts/defaultLanguage"), defaultLanguage);
    settings.setValue(QStringLiteral("server/autostart"), serverAutostart);
    settings.setValue(QStringLiteral("server/port"), serverPort);
    settings.setValue(QStringLiteral("confirm/restart"), askBeforeRestart);
    settings.setValue(QStringLiteral("confirm/delete"), askBeforeDelete);
    settings.setValue(QStringLiteral("editor/wordWrap"), wordWrap);
    settings.setValue(QStringLiteral("editor/showWhitespace"), showWhitespace);
    settings.setValue(QStringLiteral("window/geometry"), windowGeometry);
    settings.setValue(QStringLiteral("window/state"), windowState);
    settings.sync();
}

} // namespace replhost::gui
