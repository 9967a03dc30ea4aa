// SPDX-License-Identifier: Apache-2.0
#include "typescripthandler.h"

#include "nodeworker.h"

#include <replhost/sdk/runtimeprobe.h>
#include <replhost/sdk/workerprocess.h>

#include <QVersionNumber>

namespace replhost::typescript {

namespace {

// The driver keeps every import that is not marked as a type (preserveValueImports, 4.5).
const QVersionNumber kMinimumVersion(4, 5);

// Prints the compiler's main file and its version (two empty lines when there is none).
// process.argv[1] is the "compiler" setting, or empty. A bare name is looked up from '/': the
// global module directories only, never the server's working directory.
const char kCompilerScript[] = R"(
var path = require('path');
var fs = require('fs');
var wanted = process.argv[1];
var candidates = wanted ? [wanted]
    : ['typescript', '/usr/share/nodejs/typescript', '/usr/lib/nodejs/typescript'];
var compiler = '';
var version = '';
for (var i = 0; i < candidates.length && !compiler; i++) {
    try {
        var main = require.resolve(candidates[i], { paths: ['/'] });
        for (var dir = path.dirname(main), up = 0; up < 4 && !compiler; dir = path.dirname(dir), up++) {
            var manifest = path.join(dir, 'package.json');
            if (!fs.existsSync(manifest)) continue;
            var pkg = JSON.parse(fs.readFileSync(manifest, 'utf8'));
            if (pkg.name === 'typescript') {
                compiler = main;
                version = String(pkg.version);
            }
        }
    } catch (e) {
        // The next candidate.
    }
}
process.stdout.write(compiler + '\n' + version + '\n');
)";

} // namespace

sdk::RuntimeInfo TypeScriptHandler::probe(const QJsonObject &settings)
{
    const QString wanted = settings.value(QLatin1String("compiler")).toString();
    node::NodeProbe found = node::probeNode(settings, QStringLiteral("typescript"),
                                            QString::fromUtf8(kCompilerScript), {wanted});
    if (!found.runtime.available)
        return found.runtime;
    const QString compiler = found.extraLines.value(0).trimmed();
    const QString version = found.extraLines.value(1).trimmed();
    if (compiler.isEmpty()) {
        if (!wanted.isEmpty())
            return sdk::unavailableRuntime(
                QStringLiteral("the TypeScript compiler was not found at %1 (the typescript "
                               "setting \"compiler\"); point it at the typescript package")
                    .arg(wanted));
        return sdk::unavailableRuntime(
            QStringLiteral("the TypeScript compiler (Node's typescript module) was not found; "
                           "install node-typescript, or the npm package typescript globally, or "
                           "set the typescript setting \"compiler\" to its path"));
    }
    if (QVersionNumber::fromString(version) < kMinimumVersion)
        return sdk::unavailableRuntime(
            QStringLiteral("TypeScript %1 at %2 is too old: replhost needs TypeScript %3 or newer")
                .arg(version, compiler, kMinimumVersion.toString()));
    m_compiler = compiler;
    found.runtime.version = version;
    return found.runtime;
}

std::unique_ptr<sdk::Session> TypeScriptHandler::createSession(const sdk::RuntimeInfo &runtime,
                                                               const sdk::SessionOptions &options)
{
    if (runtime.available && m_compiler.isEmpty())
        return std::make_unique<sdk::FailedSession>(
            QStringLiteral("the TypeScript compiler has not been found yet"));
    return node::createDriverSession(runtime, options,
                                     QStringLiteral(":/replhost/typescript/driver.cjs"),
                                     {QStringLiteral("--typescript=") + m_compiler});
}

} // namespace replhost::typescript
