// SPDX-License-Identifier: Apache-2.0
#include "serveroptions.h"

#include <QCommandLineParser>
#include <QHostAddress>
#include <QJsonDocument>

namespace replhost::app {

namespace {

// "1048576", "512K", "32M", "1G" (binary units).
bool parseSize(const QString &text, qint64 *bytes)
{
    QString digits = text.trimmed().toUpper();
    qint64 unit = 1;
    if (digits.endsWith(QLatin1Char('K')))
        unit = 1024;
    else if (digits.endsWith(QLatin1Char('M')))
        unit = 1024 * 1024;
    else if (digits.endsWith(QLatin1Char('G')))
        unit = 1024 * 1024 * 1024;
    if (unit != 1)
        digits.chop(1);
    bool ok = false;
    const qint64 value = digits.toLongLong(&ok);
    if (!ok || value < 0 || value > (qint64(1) << 40) / unit)
        return false;
    *bytes = value * unit;
    return true;
}

} // namespace

ServerOptions ServerOptions::parse(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
            QStringLiteral("Serves replhost's stateful code contexts over HTTP (native API v1)."));
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help and exit."));
    const QCommandLineOption version(QStringLiteral("version"),
                                     QStringLiteral("Show the app, SDK, worker protocol and schema versions and exit."));
    const QCommandLineOption host(QStringLiteral("host"),
                                  QStringLiteral("Address to listen on (default 127.0.0.1). Anything "
                                                 "but a loopback address exposes a code runner to "
                                                 "the network."),
                                  QStringLiteral("address"), QStringLiteral("127.0.0.1"));
    const QCommandLineOption port(QStringLiteral("port"),
                                  QStringLiteral("Port to listen on (default %1; 0 picks a free one).")
                                          .arg(kDefaultPort),
                                  QStringLiteral("port"), QString::number(kDefaultPort));
    const QCommandLineOption dataDir(QStringLiteral("data-dir"),
                                     QStringLiteral("Data directory (default: $REPLHOST_DATA_DIR, "
                                                    "else $XDG_DATA_HOME/replhost)."),
                                     QStringLiteral("dir"));
    const QCommandLineOption pluginPath(QStringLiteral("plugin-path"),
                                        QStringLiteral("Extra directory to search for language "
                                                       "plugins (repeatable)."),
                                        QStringLiteral("dir"));
    const QCommandLineOption maxBody(QStringLiteral("max-body"),
                                     QStringLiteral("Largest request body accepted, in bytes or "
                                                    "with K/M/G (default 32M)."),
                                     QStringLiteral("size"), QStringLiteral("32M"));
    const QCommandLineOption allowOrigin(QStringLiteral("allow-origin"),
                                         QStringLiteral("Web origin allowed to call the API, e.g. "
                                                        "http://localhost:3000 (repeatable)."),
                                         QStringLiteral("origin"));
    const QCommandLineOption allowHost(QStringLiteral("allow-host"),
                                       QStringLiteral("Host name accepted in the Host header besides "
                                                      "localhost, 127.0.0.1 and [::1] (repeatable)."),
                                       QStringLiteral("name"));
    const QCommandLineOption idleTimeout(QStringLiteral("idle-timeout"),
                                         QStringLiteral("Seconds before an idle connection is closed "
                                                        "(default 60)."),
                                         QStringLiteral("seconds"), QStringLiteral("60"));
    const QCommandLineOption headTimeout(QStringLiteral("head-timeout"),
                                         QStringLiteral("Seconds a request head may take to arrive "
                                                        "from its first byte (default 10)."),
                                         QStringLiteral("seconds"), QStringLiteral("10"));
    const QCommandLineOption maxConnections(QStringLiteral("max-connections"),
                                            QStringLiteral("Open connections at most; past it a new "
                                                           "one is answered 503 (default 1024)."),
                                            QStringLiteral("count"), QStringLiteral("1024"));
    const QCommandLineOption maxConnectionsPerClient(
            QStringLiteral("max-connections-per-client"),
            QStringLiteral("Open connections one client address may hold (default 512)."),
            QStringLiteral("count"), QStringLiteral("512"));
    const QCommandLineOption maxOutput(QStringLiteral("max-output"),
                                       QStringLiteral("Output kept per execution or command, in "
                                                      "bytes or with K/M/G (default 16M); beyond "
                                                      "it a \"truncated\" event is sent. The "
                                                      "default of the workspace setting "
                                                      "limits.output_bytes."),
                                       QStringLiteral("size"), QStringLiteral("16M"));
    const QCommandLineOption workspaceDefaults(
            QStringLiteral("workspace-defaults"),
            QStringLiteral("Settings of every workspace that does not set its own, as JSON in the "
                           "form of a workspace's \"settings\", e.g. "
                           "'{\"limits\":{\"max_contexts\":16,\"timeout_ms\":60000}}'."),
            QStringLiteral("json"));
    const QCommandLineOption maxStreams(QStringLiteral("max-streams-per-client"),
                                        QStringLiteral("Event streams one client address may hold "
                                                       "open at once (default 32; 0: no cap)."),
                                        QStringLiteral("count"), QStringLiteral("32"));
    const QCommandLineOption keepAlive(QStringLiteral("sse-keep-alive"),
                                       QStringLiteral("Milliseconds between keep-alive comments on "
                                                      "a quiet event stream (default 15000)."),
                                       QStringLiteral("ms"), QStringLiteral("15000"));
    const QCommandLineOption maxWorkers(QStringLiteral("max-workers"),
                                        QStringLiteral("Workers running at once; beyond it the least "
                                                       "recently used idle context is made dormant "
                                                       "and restored on its next use (default: one "
                                                       "per 256 MiB of memory, 4 to 64)."),
                                        QStringLiteral("count"));
    const QCommandLineOption workerIdle(QStringLiteral("worker-idle-timeout"),
                                        QStringLiteral("Seconds after which an idle context's "
                                                       "worker stops, the context going dormant "
                                                       "(default 1800; 0: never)."),
                                        QStringLiteral("seconds"), QStringLiteral("1800"));
    const QCommandLineOption warmPool(QStringLiteral("warm-pool"),
                                      QStringLiteral("Started idle workers kept per language, so a "
                                                     "new context does not wait for its "
                                                     "interpreter to start (default 1; 0 "
                                                     "disables). LANGUAGE=COUNT sets one "
                                                     "language's; repeatable."),
                                      QStringLiteral("count"));
    parser.addOptions({maxWorkers, workerIdle, warmPool});
    parser.addOptions({help, version, host, port, dataDir, pluginPath, maxBody, allowOrigin,
                       allowHost, idleTimeout, headTimeout, maxConnections,
                       maxConnectionsPerClient, maxOutput, maxStreams, keepAlive});
    parser.addOption(workspaceDefaults);
    const QCommandLineOption bwrap(QStringLiteral("bwrap"),
                                   QStringLiteral("The bubblewrap program that runs the workers "
                                                  "of workspaces whose isolation is \"sandbox\" "
                                                  "(default: bwrap on PATH)."),
                                   QStringLiteral("path"));
    parser.addOption(bwrap);
    const QCommandLineOption e2bPort(QStringLiteral("e2b-port"),
                                     QStringLiteral("Also serve the E2B code interpreter API at the "
                                                    "root of 127.0.0.1:<port>, WITHOUT a token, for "
                                                    "E2B SDKs in debug mode (0 picks a free port). "
                                                    "Any local process can then run code."),
                                     QStringLiteral("port"));
    parser.addOption(e2bPort);

    ServerOptions options;
    options.helpText = parser.helpText();
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

    if (!parser.parse(arguments))
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

    const QHostAddress address(parser.value(host));
    if (address.isNull())
        return fail(QStringLiteral("--host must be an IP address, not '%1'").arg(parser.value(host)));
    bool ok = false;
    const uint portNumber = parser.value(port).toUInt(&ok);
    if (!ok || portNumber > 65535)
        return fail(QStringLiteral("--port must be a number from 0 to 65535"));
    qint64 bodyLimit = 0;
    if (!parseSize(parser.value(maxBody), &bodyLimit))
        return fail(QStringLiteral("--max-body must be a size such as 1048576, 512K or 32M"));
    const int idleSeconds = parser.value(idleTimeout).toInt(&ok);
    if (!ok || idleSeconds < 1 || idleSeconds > 24 * 3600)
        return fail(QStringLiteral("--idle-timeout must be a number of seconds from 1 to 86400"));
    const int headSeconds = parser.value(headTimeout).toInt(&ok);
    if (!ok || headSeconds < 1 || headSeconds > 3600)
        return fail(QStringLiteral("--head-timeout must be a number of seconds from 1 to 3600"));
    const int connectionCap = parser.value(maxConnections).toInt(&ok);
    if (!ok || connectionCap < 1 || connectionCap > 1000000)
        return fail(QStringLiteral("--max-connections must be a number from 1 to 1000000"));
    const int clientConnectionCap = parser.value(maxConnectionsPerClient).toInt(&ok);
    if (!ok || clientConnectionCap < 1 || clientConnectionCap > 1000000)
        return fail(QStringLiteral("--max-connections-per-client must be a number from 1 to 1000000"));
    qint64 outputLimit = 0;
    if (!parseSize(parser.value(maxOutput), &outputLimit) || outputLimit < 1)
        return fail(QStringLiteral("--max-output must be a size such as 65536, 512K or 16M"));
    const int streamCap = parser.value(maxStreams).toInt(&ok);
    if (!ok || streamCap < 0)
        return fail(QStringLiteral("--max-streams-per-client must be a number from 0 (no cap)"));
    // A floor, so a typo cannot make every quiet stream a busy loop of comments.
    const int keepAliveMs = parser.value(keepAlive).toInt(&ok);
    if (!ok || keepAliveMs < 10 || keepAliveMs > 3600 * 1000)
        return fail(QStringLiteral("--sse-keep-alive must be a number of milliseconds from 10 to "
                                   "3600000"));

    if (parser.isSet(e2bPort)) {
        const uint e2b = parser.value(e2bPort).toUInt(&ok);
        if (!ok || e2b > 65535)
            return fail(QStringLiteral("--e2b-port must be a number from 0 to 65535"));
        if (e2b != 0 && e2b == portNumber)
            return fail(QStringLiteral("--e2b-port must differ from --port (%1)").arg(portNumber));
        options.e2bPort = int(e2b);
    }

    int workerCap = 0;
    if (parser.isSet(maxWorkers)) {
        workerCap = parser.value(maxWorkers).toInt(&ok);
        if (!ok || workerCap < 1 || workerCap > 100000)
            return fail(QStringLiteral("--max-workers must be a number from 1 to 100000"));
    }
    const int workerIdleSeconds = parser.value(workerIdle).toInt(&ok);
    if (!ok || workerIdleSeconds < 0 || workerIdleSeconds > 7 * 24 * 3600)
        return fail(QStringLiteral("--worker-idle-timeout must be a number of seconds from 0 "
                                   "(never) to 604800"));

    for (const QString &value : parser.values(warmPool)) {
        const qsizetype equals = value.indexOf(QLatin1Char('='));
        const QString language = equals < 0 ? QString() : value.left(equals).trimmed().toLower();
        const int count = value.mid(equals + 1).toInt(&ok);
        if (!ok || count < 0 || count > kMaxWarmPool || (equals >= 0 && language.isEmpty()))
            return fail(QStringLiteral("--warm-pool must be a count from 0 to %1, or "
                                       "LANGUAGE=COUNT, not '%2'")
                            .arg(kMaxWarmPool)
                            .arg(value));
        if (equals < 0)
            options.warmPoolSize = count;
        else
            options.warmPoolSizes.insert(language, count);
    }

    options.dataDir = parser.value(dataDir);
    options.bwrapPath = parser.value(bwrap);
    options.pluginPaths = parser.values(pluginPath);
    options.server.address = address;
    options.server.port = quint16(portNumber);
    options.server.allowedOrigins = parser.values(allowOrigin);
    options.server.allowedHosts = parser.values(allowHost);
    options.server.limits.maxBodyBytes = bodyLimit;
    options.server.limits.idleTimeoutMs = idleSeconds * 1000;
    options.server.limits.headTimeoutMs = headSeconds * 1000;
    options.server.limits.maxConnections = connectionCap;
    options.server.limits.maxConnectionsPerAddress = clientConnectionCap;
    options.server.maxStreamsPerClient = streamCap;
    options.server.sseKeepAliveMs = keepAliveMs;
    if (parser.isSet(workspaceDefaults)) {
        QJsonParseError error;
        const QJsonDocument json = QJsonDocument::fromJson(parser.value(workspaceDefaults).toUtf8(),
                                                           &error);
        if (!json.isObject())
            return fail(QStringLiteral("--workspace-defaults must be a JSON object (%1)")
                            .arg(error.error == QJsonParseError::NoError
                                         ? QStringLiteral("not an object")
                                         : error.errorString()));
        auto defaults = core::WorkspaceSettings::fromJson(json.object(), options.workspaceDefaults);
        if (!defaults)
            return fail(QStringLiteral("--workspace-defaults: %1").arg(defaults.error().message));
        options.workspaceDefaults = *defaults;
    }
    if (parser.isSet(maxOutput))
        options.workspaceDefaults.limits.outputBytes = outputLimit;
    options.maxResidentWorkers = workerCap;
    options.workerIdleTimeoutMs = workerIdleSeconds * 1000;
    return options;
}

} // namespace replhost::app
