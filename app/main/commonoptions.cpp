// SPDX-License-Identifier: Apache-2.0
#include "commonoptions.h"

namespace replhost::app {

CommonOptions::CommonOptions(QCommandLineParser &parser)
    : m_parser(parser),
      m_help({QStringLiteral("h"), QStringLiteral("help")}, QStringLiteral("Show this help and exit.")),
      m_version(QStringLiteral("version"),
                QStringLiteral("Show the app, SDK, worker protocol and schema versions and exit.")),
      m_dataDir(QStringLiteral("data-dir"),
                QStringLiteral("Data directory (default: $REPLHOST_DATA_DIR, else "
                               "$XDG_DATA_HOME/replhost)."),
                QStringLiteral("dir")),
      m_pluginPath(QStringLiteral("plugin-path"),
                   QStringLiteral("Extra directory to search for language plugins (repeatable)."),
                   QStringLiteral("dir"))
{
    m_parser.addOptions({m_help, m_version, m_dataDir, m_pluginPath});
}

QString CommonOptions::helpText() const
{
    return m_parser.helpText()
            + QStringLiteral("\nEnvironment:\n"
                             "  REPLHOST_DATA_DIR     data directory (when --data-dir is not given)\n"
                             "  REPLHOST_TOKEN        API token to use instead of <data dir>/token\n"
                             "  REPLHOST_PLUGIN_PATH  colon-separated plugin directories, searched first\n");
}

CommonOptions::Outcome CommonOptions::parse(const QStringList &arguments, QString *error) const
{
    if (!m_parser.parse(arguments)) {
        *error = m_parser.errorText();
        return Outcome::Fail;
    }
    if (!m_parser.positionalArguments().isEmpty()) {
        *error = QStringLiteral("unexpected argument '%1'").arg(m_parser.positionalArguments().front());
        return Outcome::Fail;
    }
    if (m_parser.isSet(m_help))
        return Outcome::ShowHelp;
    if (m_parser.isSet(m_version))
        return Outcome::ShowVersion;
    return Outcome::Go;
}

} // namespace replhost::app
