// SPDX-License-Identifier: Apache-2.0
#include "guioptions.h"

#include <QCommandLineParser>

namespace replhost::app {

GuiOptions GuiOptions::parse(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
            QStringLiteral("The replhost workbench: live interpreters side by side, an editor to "
                           "run code in them, and the HTTP API for agents on the same contexts."));
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help and exit."));
    const QCommandLineOption version(QStringLiteral("version"),
                                     QStringLiteral("Show the app, SDK, worker protocol and schema versions and exit."));
    const QCommandLineOption dataDir(QStringLiteral("data-dir"),
                                     QStringLiteral("Data directory (default: $REPLHOST_DATA_DIR, "
                                                    "else $XDG_DATA_HOME/replhost)."),
                                     QStringLiteral("dir"));
    const QCommandLineOption pluginPath(QStringLiteral("plugin-path"),
                                        QStringLiteral("Extra directory to search for language "
                                                       "plugins (repeatable)."),
                                        QStringLiteral("dir"));
    const QCommandLineOption serve(QStringLiteral("serve"),
                                   QStringLiteral("Start the HTTP server on 127.0.0.1 at once; an "
                                                  "optional port may follow (0 picks a free one; "
                                                  "default: the saved port, 49999)."));
    parser.addOptions({help, version, dataDir, pluginPath, serve});

    GuiOptions options;
    options.helpText = parser.helpText().replace(QStringLiteral("--serve       "), QStringLiteral("--serve [port]"));
    options.helpText += QStringLiteral(
            "\nEnvironment:\n"
            "  REPLHOST_DATA_DIR     data directory (when --data-dir is not given)\n"
            "  REPLHOST_TOKEN        API token to use instead of <data dir>/token\n"
            "  REPLHOST_PLUGIN_PATH  colon-separated plugin directories, searched first\n");

    auto fail = [&options](const QString &message) {
        options.action = Action::Fail;
        options.error = message;
        return options;
    };

    // QCommandLineParser has no optional option values: take a number that follows --serve
    // out of the list before parsing (and accept --serve=PORT).
    QStringList args = arguments;
    for (int i = 1; i < args.size(); ++i) {
        QString port;
        if (args.at(i) == QLatin1String("--serve") && i + 1 < args.size()
            && !args.at(i + 1).startsWith(QLatin1Char('-'))) {
            port = args.takeAt(i + 1);
        } else if (args.at(i).startsWith(QLatin1String("--serve="))) {
            port = args.at(i).mid(8);
            args[i] = QStringLiteral("--serve");
        } else {
            continue;
        }
        bool ok = false;
        const uint number = port.toUInt(&ok);
        if (!ok || number > 65535)
            return fail(QStringLiteral("--serve takes a port from 0 to 65535, not '%1'").arg(port));
        options.servePort = quint16(number);
    }

    if (!parser.parse(args))
        return fail(parser.errorText());
    if (!parser.positionalArguments().isEmpty())
        return fail(QStringLiteral("unexpected argument '%1'").arg(parser.positionalArguments().front()));
    if (parser.isSet(help)) {
        options.action = Action::ShowHelp;
        return options;
    }
    if (parser.isSet(version)) {
        options.action = Action::ShowVersion;
        return options;
    }
    options.dataDir = parser.value(dataDir);
    options.pluginPaths = parser.values(pluginPath);
    options.serve = parser.isSet(serve);
    return options;
}

} // namespace replhost::app
