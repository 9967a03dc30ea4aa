// SPDX-License-Identifier: Apache-2.0
#include "luahandler.h"

#include <replhost/sdk/driverfiles.h>
#include <replhost/sdk/runtimeprobe.h>
#include <replhost/sdk/workerprocess.h>

namespace sdk = replhost::sdk;

namespace {

constexpr int kProbeTimeoutMs = 10000;

// Prints the version, then the modules the driver needs that cannot be loaded, each with the
// Debian package that provides it.
const char kProbeScript[] =
    "print(_VERSION) "
    "local missing = {} "
    "for module, package in pairs({['posix.unistd'] = 'lua-posix', dkjson = 'lua-dkjson'}) do "
    "  if not pcall(require, module) then missing[#missing + 1] = package end "
    "end "
    "table.sort(missing) print(table.concat(missing, ' '))";

} // namespace

sdk::RuntimeInfo LuaHandler::probe(const QJsonObject &settings)
{
    const replhost::Result<QString> program = sdk::locateRuntime(
        {QStringLiteral("lua"), QStringLiteral("lua5.3"), QStringLiteral("REPLHOST_LUA"),
         QStringLiteral("install lua5.3")},
        settings);
    if (!program)
        return sdk::unavailableRuntime(program.error().message);

    const replhost::Result<QByteArray> answer = sdk::runProbeCommand(
        *program, {QStringLiteral("-e"), QString::fromLatin1(kProbeScript)}, kProbeTimeoutMs);
    if (!answer)
        return sdk::unavailableRuntime(answer.error().message
                                       + QStringLiteral("; point REPLHOST_LUA at lua5.3"));

    // "Lua 5.3\n<missing packages>\n"
    const QStringList lines = QString::fromUtf8(*answer).split(QLatin1Char('\n'));
    const QString version = lines.value(0).section(QLatin1Char(' '), 1).trimmed();
    const QString missing = lines.value(1).trimmed();
    if (version != QLatin1String("5.3"))
        return sdk::unavailableRuntime(
            QStringLiteral("%1 is Lua %2, the driver needs Lua 5.3; install lua5.3 or point "
                           "REPLHOST_LUA at it")
                .arg(*program, version.isEmpty() ? QStringLiteral("of an unknown version") : version));
    if (!missing.isEmpty())
        return sdk::unavailableRuntime(
            QStringLiteral("%1 lacks Lua modules the driver needs; install %2")
                .arg(*program, missing.split(QLatin1Char(' ')).join(QStringLiteral(" and "))));

    sdk::RuntimeInfo info;
    info.available = true;
    info.version = version;
    info.executable = *program;
    return info;
}

std::unique_ptr<sdk::Session> LuaHandler::createSession(const sdk::RuntimeInfo &runtime,
                                                        const sdk::SessionOptions &options)
{
    if (!runtime.available)
        return std::make_unique<sdk::FailedSession>(
            runtime.reason.isEmpty() ? QStringLiteral("no usable lua5.3 was found") : runtime.reason);
    replhost::Result<QString> driver =
        sdk::materializeDriver(QStringLiteral(":/replhost/lua/driver.lua"));
    if (!driver)
        return std::make_unique<sdk::FailedSession>(driver.error().message);

    sdk::WorkerSpec spec;
    spec.program = runtime.executable;
    spec.arguments = {driver.value()};
    return std::make_unique<sdk::WorkerProcess>(std::move(spec), options);
}
