// SPDX-License-Identifier: Apache-2.0
#include "perlhandler.h"

#include <replhost/sdk/driverfiles.h>
#include <replhost/sdk/runtimeprobe.h>
#include <replhost/sdk/workerprocess.h>

#include <QFileInfo>
#include <QVersionNumber>

namespace replhost::perl {

namespace {

// A perlbrew or plenv shim may have to start a shell and look up versions first.
constexpr int kProbeTimeoutMs = 15000;

// The driver aliases lexicals with the refaliasing feature and reads pads through B's pad-name
// API; both appeared in 5.22.
const QVersionNumber kMinimumVersion(5, 22);

// Runs under any Perl 5, so an old one is reported as too old instead of as broken. Debian and
// others split Perl: a perl-base without the module packages lacks some of the core modules the
// driver needs, and that is worth saying precisely.
const char kProbeScript[] =
    "my @missing; "
    "for my $m (qw(B Cwd Data::Dumper Fcntl IO::Handle JSON::PP MIME::Base64 POSIX "
    "Scalar::Util Time::HiRes mro overload)) { "
    "(my $f = \"$m.pm\") =~ s{::}{/}g; eval { require $f; 1 } or push @missing, $m } "
    "print \"$^X\\n\"; printf \"%vd\\n\", $^V; print \"@missing\\n\";";

} // namespace

sdk::RuntimeInfo PerlHandler::probe(const QJsonObject &settings)
{
    const Result<QString> program = sdk::locateRuntime(
        {QStringLiteral("perl"), QStringLiteral("perl"), QStringLiteral("REPLHOST_PERL"),
         QStringLiteral("install perl")},
        settings);
    if (!program)
        return sdk::unavailableRuntime(program.error().message);

    // The program may be a wrapper; asking the interpreter for $^X lets every session start the
    // real binary directly.
    const Result<QByteArray> answer = sdk::runProbeCommand(
        *program, {QStringLiteral("-e"), QString::fromLatin1(kProbeScript)}, kProbeTimeoutMs);
    if (!answer)
        return sdk::unavailableRuntime(
            answer.error().message + QStringLiteral("; point REPLHOST_PERL at Perl 5.22 or newer"));

    const QStringList lines = QString::fromUtf8(*answer).split(QLatin1Char('\n'));
    if (lines.size() < 3 || lines.at(1).trimmed().isEmpty())
        return sdk::unavailableRuntime(
            QStringLiteral("%1 gave an unexpected answer when asked for its version").arg(*program));
    QString executable = lines.at(0).trimmed();
    const QString version = lines.at(1).trimmed();
    const QString missing = lines.at(2).trimmed();
    // $^X may be relative or empty on unusual builds; the program we ran still works.
    if (executable.isEmpty() || !QFileInfo(executable).isAbsolute()
        || !QFileInfo(executable).isExecutable())
        executable = *program;

    if (QVersionNumber::fromString(version) < kMinimumVersion)
        return sdk::unavailableRuntime(
            QStringLiteral("Perl %1 at %2 is too old: replhost needs Perl %3 or newer; install it "
                           "or point REPLHOST_PERL at it")
                .arg(version, executable, kMinimumVersion.toString()));
    if (!missing.isEmpty())
        return sdk::unavailableRuntime(
            QStringLiteral("Perl %1 at %2 lacks core modules the driver needs (%3); install the "
                           "complete Perl (on Debian and Ubuntu the perl package, not only "
                           "perl-base) or point REPLHOST_PERL at one")
                .arg(version, executable, missing));

    sdk::RuntimeInfo info;
    info.available = true;
    info.version = version;
    info.executable = executable;
    return info;
}

std::unique_ptr<sdk::Session> PerlHandler::createSession(const sdk::RuntimeInfo &runtime,
                                                         const sdk::SessionOptions &options)
{
    if (!runtime.available || runtime.executable.isEmpty()) {
        return std::make_unique<sdk::FailedSession>(
            runtime.reason.isEmpty() ? QStringLiteral("no usable perl was found") : runtime.reason);
    }
    Result<QString> driver = sdk::materializeDriver(QStringLiteral(":/replhost/perl/driver.pl"));
    if (!driver)
        return std::make_unique<sdk::FailedSession>(driver.error().message);

    sdk::WorkerSpec spec;
    spec.program = runtime.executable;
    spec.arguments = {driver.value()};
    return std::make_unique<sdk::WorkerProcess>(std::move(spec), options);
}

} // namespace replhost::perl
