// SPDX-License-Identifier: Apache-2.0
#include "guioptions.h"

#include "commonoptions.h"

#include <QCommandLineParser>

namespace replhost::app {

GuiOptions GuiOptions::parse(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
            QStringLiteral("The replhost workbench: live interpreters side by side, an editor to "
                           "run code in them, and the HTTP API for agents on the same contexts."));
    const CommonOptions common(parser);
    const QCommandLineOption serve(QStringLiteral("serve"),
                                   QStringLiteral("Start the HTTP server on 127.0.0.1 at once; an "
                                                  "optional port may follow (0 picks a free one; "
                                                  "default: the saved port, 49999)."));
    parser.addOption(serve);

    GuiOptions options;
    options.helpText = common.helpText().replace(QStringLiteral("--serve       "),
                                                  QStringLiteral("--serve [port]"));

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

    if (!common.parseInto(args, options))
        return options;
    options.dataDir = common.dataDir();
    options.pluginPaths = common.pluginPaths();
    options.serve = parser.isSet(serve);
    return options;
}

} // namespace replhost::app
