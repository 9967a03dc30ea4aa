// SPDX-License-Identifier: Apache-2.0
#include "serveroptions.h"

#include "commonoptions.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QHostAddress>
#include <QJsonDocument>
#include <QSysInfo>

#include <algorithm>
#include <optional>

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

// A whole-number option in [min, max], read into `*out` when it is given (else `*out` keeps
// its value). The error names the option, what it counts and what zero means.
struct NumberOption {
    const QCommandLineOption *option;
    int min;
    int max;
    const char *unit;      // "seconds", or null for a plain count
    const char *zeroMeans; // "never", or null
    int *out;

    std::optional<QString> read(const QCommandLineParser &parser) const
    {
        if (!parser.isSet(*option) && option->defaultValues().isEmpty())
            return std::nullopt;
        bool ok = false;
        const int value = parser.value(*option).toInt(&ok);
        if (ok && value >= min && value <= max) {
            *out = value;
            return std::nullopt;
        }
        return QStringLiteral("--%1 must be a number%2 from %3%4 to %5")
                .arg(option->names().constFirst(),
                     unit ? QStringLiteral(" of ") + QLatin1String(unit) : QString(),
                     QString::number(min),
                     zeroMeans ? QStringLiteral(" (%1)").arg(QLatin1String(zeroMeans)) : QString(),
                     QString::number(max));
    }
};

} // namespace

ServerOptions ServerOptions::parse(const QStringList &arguments)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
            QStringLiteral("Serves replhost's stateful code contexts over HTTP (native API v1)."));
    const CommonOptions common(parser);
    // name, value name, default (empty: none), description
    const auto option = [](const char *name, const char *valueName, const char *defaultValue,
                           const QString &description) {
        QCommandLineOption made(QLatin1String(name), description, QLatin1String(valueName));
        if (*defaultValue)
            made.setDefaultValue(QLatin1String(defaultValue));
        return made;
    };
    const QString defaultPort = QString::number(kDefaultPort);
    const QCommandLineOption host = option(
            "host", "address", "127.0.0.1",
            QStringLiteral("Address to listen on (default 127.0.0.1). Anything but a loopback "
                           "address exposes a code runner to the network."));
    QCommandLineOption port = option(
            "port", "port", "",
            QStringLiteral("Port to listen on (default %1; 0 picks a free one; auto: the port "
                           "this data directory's server had last time while it is free, else a "
                           "free one, as the systemd user unit does).").arg(defaultPort));
    port.setDefaultValue(defaultPort);
    const QCommandLineOption maxBody = option(
            "max-body", "size", "32M",
            QStringLiteral("Largest request body accepted, in bytes or with K/M/G (default 32M)."));
    const QCommandLineOption allowOrigin = option(
            "allow-origin", "origin", "",
            QStringLiteral("Web origin allowed to call the API, e.g. http://localhost:3000 "
                           "(repeatable)."));
    const QCommandLineOption allowHost = option(
            "allow-host", "name", "",
            QStringLiteral("Host name accepted in the Host header besides localhost, 127.0.0.1 "
                           "and [::1] (repeatable)."));
    const QCommandLineOption idleTimeout = option(
            "idle-timeout", "seconds", "60",
            QStringLiteral("Seconds before an idle connection is closed (default 60)."));
    const QCommandLineOption headTimeout = option(
            "head-timeout", "seconds", "10",
            QStringLiteral("Seconds a request head may take to arrive from its first byte "
                           "(default 10)."));
    const QCommandLineOption maxConnections = option(
            "max-connections", "count", "1024",
            QStringLiteral("Open connections at most; past it a new one is answered 503 "
                           "(default 1024)."));
    const QCommandLineOption maxConnectionsPerClient = option(
            "max-connections-per-client", "count", "512",
            QStringLiteral("Open connections one client address may hold (default 512)."));
    const QCommandLineOption maxOutput = option(
            "max-output", "size", "16M",
            QStringLiteral("Output kept per execution or command, in bytes or with K/M/G "
                           "(default 16M); beyond it a \"truncated\" event is sent. The default "
                           "of the workspace setting limits.output_bytes."));
    const QCommandLineOption workspaceDefaults = option(
            "workspace-defaults", "json", "",
            QStringLiteral("Settings of every workspace that does not set its own, as JSON in the "
                           "form of a workspace's \"settings\", e.g. "
                           "'{\"limits\":{\"max_contexts\":16,\"timeout_ms\":60000}}'."));
    const QCommandLineOption maxStreams = option(
            "max-streams-per-client", "count", "32",
            QStringLiteral("Event streams one client address may hold open at once (default 32; "
                           "0: no cap)."));
    const QCommandLineOption keepAlive = option(
            "sse-keep-alive", "ms", "15000",
            QStringLiteral("Milliseconds between keep-alive comments on a quiet event stream "
                           "(default 15000)."));
    const QCommandLineOption maxWorkers = option(
            "max-workers", "count", "",
            QStringLiteral("Workers running at once; beyond it the least recently used idle "
                           "context is made dormant and restored on its next use (default: one "
                           "per 256 MiB of memory, 4 to 64)."));
    const QCommandLineOption workerIdle = option(
            "worker-idle-timeout", "seconds", "1800",
            QStringLiteral("Seconds after which an idle context's worker stops, the context going "
                           "dormant (default 1800; 0: never)."));
    const QCommandLineOption warmPool = option(
            "warm-pool", "count", "",
            QStringLiteral("Started idle workers kept per language, so a new context does not "
                           "wait for its interpreter to start (default 1; 0 disables). "
                           "LANGUAGE=COUNT sets one language's; repeatable."));
    const QCommandLineOption bwrap = option(
            "bwrap", "path", "",
            QStringLiteral("The bubblewrap program that runs the workers of workspaces whose "
                           "isolation is \"sandbox\" (default: bwrap on PATH)."));
    const QCommandLineOption allowVolume = option(
            "allow-volume", "dir", "",
            QStringLiteral("A host directory whose directories sandboxed workspaces may bind as "
                           "volumes (OpenSandbox's host volumes; repeatable; none by default)."));
    const QCommandLineOption e2bPort = option(
            "e2b-port", "port", "",
            QStringLiteral("Also serve the E2B code interpreter API at the root of "
                           "127.0.0.1:<port>, WITHOUT a token, for E2B SDKs in debug mode (0 "
                           "picks a free port). Any local process can then run code."));
    const QCommandLineOption e2bWorkspace = option(
            "e2b-workspace", "name", "",
            QStringLiteral("The workspace the E2B routes serve (default: \"default\"): a sandbox "
                           "whose code sees it at /home/user, as E2B's does, created if missing."));
    const QCommandLineOption tokenFile = option(
            "token-file", "path", "",
            QStringLiteral("Read the bearer token from this file (e.g. a mounted Kubernetes "
                           "Secret, the same for every instance) instead of REPLHOST_TOKEN or "
                           "<data dir>/token."));
    const QCommandLineOption instanceId = option(
            "instance-id", "name", "",
            QStringLiteral("This server's name in the X-Replhost-Instance field of every answer, "
                           "so a client behind a router sees which instance answered (default: "
                           "the host name)."));
    parser.addOptions({tokenFile, instanceId});
    parser.addOptions({host, port, maxBody, allowOrigin, allowHost, idleTimeout, headTimeout,
                       maxConnections, maxConnectionsPerClient, maxOutput, maxStreams, keepAlive,
                       maxWorkers, workerIdle, warmPool, workspaceDefaults, bwrap, allowVolume,
                       e2bPort, e2bWorkspace});

    ServerOptions options;
    options.helpText = common.helpText();

    auto fail = [&options](const QString &message) {
        options.action = Action::Fail;
        options.error = message;
        return options;
    };

    if (!common.parseInto(arguments, options))
        return options;

    const QHostAddress address(parser.value(host));
    if (address.isNull())
        return fail(QStringLiteral("--host must be an IP address, not '%1'").arg(parser.value(host)));
    bool ok = false;
    const bool portAuto = parser.value(port) == QLatin1String("auto");
    const uint portNumber = portAuto ? 0 : parser.value(port).toUInt(&ok);
    if (!portAuto && (!ok || portNumber > 65535))
        return fail(QStringLiteral("--port must be a number from 0 to 65535, or auto"));
    qint64 bodyLimit = 0;
    if (!parseSize(parser.value(maxBody), &bodyLimit))
        return fail(QStringLiteral("--max-body must be a size such as 1048576, 512K or 32M"));
    qint64 outputLimit = 0;
    if (!parseSize(parser.value(maxOutput), &outputLimit) || outputLimit < 1)
        return fail(QStringLiteral("--max-output must be a size such as 65536, 512K or 16M"));
    int idleSeconds = 0, headSeconds = 0, connectionCap = 0, clientConnectionCap = 0;
    int streamCap = 0, keepAliveMs = 0, workerCap = 0, workerIdleSeconds = 0;
    // The keep-alive's floor keeps a typo from making every quiet stream a busy loop of comments.
    const NumberOption numbers[] = {
        {&idleTimeout, 1, 24 * 3600, "seconds", nullptr, &idleSeconds},
        {&headTimeout, 1, 3600, "seconds", nullptr, &headSeconds},
        {&maxConnections, 1, 1000000, nullptr, nullptr, &connectionCap},
        {&maxConnectionsPerClient, 1, 1000000, nullptr, nullptr, &clientConnectionCap},
        {&maxStreams, 0, 1000000, nullptr, "no cap", &streamCap},
        {&keepAlive, 10, 3600 * 1000, "milliseconds", nullptr, &keepAliveMs},
        {&maxWorkers, 1, 100000, nullptr, nullptr, &workerCap},
        {&workerIdle, 0, 7 * 24 * 3600, "seconds", "never", &workerIdleSeconds},
    };
    for (const NumberOption &number : numbers) {
        if (const std::optional<QString> error = number.read(parser))
            return fail(*error);
    }

    if (parser.isSet(e2bPort)) {
        const uint e2b = parser.value(e2bPort).toUInt(&ok);
        if (!ok || e2b > 65535)
            return fail(QStringLiteral("--e2b-port must be a number from 0 to 65535"));
        if (e2b != 0 && e2b == portNumber)
            return fail(QStringLiteral("--e2b-port must differ from --port (%1)").arg(portNumber));
        options.e2bPort = int(e2b);
    }

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

    options.server.e2bWorkspace = parser.value(e2bWorkspace);
    if (parser.isSet(e2bWorkspace) && options.server.e2bWorkspace.isEmpty())
        return fail(QStringLiteral("--e2b-workspace needs the name of a workspace"));

    options.tokenFile = parser.value(tokenFile);
    if (parser.isSet(tokenFile) && options.tokenFile.isEmpty())
        return fail(QStringLiteral("--token-file needs the path of a file"));
    const QString instance = parser.isSet(instanceId) ? parser.value(instanceId)
                                                      : QSysInfo::machineHostName();
    const bool printable = std::all_of(instance.cbegin(), instance.cend(), [](QChar c) {
        return c.unicode() > 0x20 && c.unicode() < 0x7f;
    });
    if (instance.isEmpty() || instance.size() > 253 || !printable)
        return fail(QStringLiteral("--instance-id must be 1 to 253 printable ASCII characters "
                                   "without spaces, not '%1'").arg(instance));
    options.server.instanceId = instance.toLatin1();

    options.dataDir = common.dataDir();
    options.bwrapPath = parser.value(bwrap);
    options.pluginPaths = common.pluginPaths();
    options.server.address = address;
    options.server.port = quint16(portNumber);
    options.portAuto = portAuto;
    options.server.allowedOrigins = parser.values(allowOrigin);
    options.server.allowedHosts = parser.values(allowHost);
    options.server.limits.maxBodyBytes = bodyLimit;
    options.server.limits.idleTimeoutMs = idleSeconds * 1000;
    options.server.limits.headTimeoutMs = headSeconds * 1000;
    options.server.limits.maxConnections = connectionCap;
    options.server.limits.maxConnectionsPerAddress = clientConnectionCap;
    options.server.maxStreamsPerClient = streamCap;
    options.server.sseKeepAliveMs = keepAliveMs;
    for (const QString &dir : parser.values(allowVolume)) {
        const QFileInfo info(dir);
        if (!info.isAbsolute() || !info.isDir())
            return fail(QStringLiteral("--allow-volume %1: not an absolute path of a directory").arg(dir));
        options.workspaceDefaults.allowedVolumeRoots.append(info.canonicalFilePath());
    }
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
