// SPDX-License-Identifier: Apache-2.0
#include "kernelsession.h"

#include <replhost/sdk/confinedcommand.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QUuid>

#include <csignal>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace replhost::jupyter {

using sdk::Event;

namespace {

// What a frontend answers for the end of input (jupyter_console sends it for Ctrl-D; ipykernel
// raises EOFError on it).
const QString kEndOfInput = QStringLiteral("\x04");

// How long a kernel that has answered waits for its stdin socket to connect before it is taken as
// ready anyway (a kernel may have no stdin socket): the socket connects within ZeroMQ's reconnect
// interval (100 ms) of the kernel's bind.
constexpr int kStdinWaitMs = 2000;

int setting(const QJsonObject &settings, const char *key, int fallback, int minimum)
{
    const QJsonValue value = settings.value(QLatin1String(key));
    return value.isDouble() ? std::max(minimum, value.toInt()) : fallback;
}

// A free loopback port for a kernel that cannot use ipc; 0 when none can be had.
int freeLoopbackPort()
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0
        && ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) == 0)
        port = ntohs(address.sin_port);
    ::close(fd);
    return port;
}

QJsonObject mimeBundle(const QJsonObject &data)
{
    QJsonObject bundle = data;
    // Binary types travel in base64, which kernels may wrap in lines; replhost's have none.
    for (auto it = bundle.begin(); it != bundle.end(); ++it) {
        if (it.key().startsWith(QLatin1String("image/")) && it.key() != QLatin1String("image/svg+xml")
            && it.value().isString())
            it.value() = QString(it.value().toString()).remove(QRegularExpression(QStringLiteral("\\s")));
    }
    if (!bundle.contains(QLatin1String("text/plain")))
        bundle.insert(QStringLiteral("text/plain"), QString());
    return bundle;
}

} // namespace

KernelTimings KernelTimings::fromSettings(const QJsonObject &settings)
{
    KernelTimings t;
    t.startTimeoutMs = setting(settings, "start_timeout_ms", t.startTimeoutMs, 100);
    t.heartbeatIntervalMs = setting(settings, "heartbeat_interval_ms", t.heartbeatIntervalMs, 10);
    t.heartbeatMisses = setting(settings, "heartbeat_misses", t.heartbeatMisses, 1);
    t.interruptRepeatMs = setting(settings, "interrupt_repeat_ms", t.interruptRepeatMs, 10);
    t.interruptKillMs = setting(settings, "interrupt_kill_ms", t.interruptKillMs, 10);
    t.shutdownGraceMs = setting(settings, "shutdown_grace_ms", t.shutdownGraceMs, 10);
    return t;
}

KernelSession::KernelSession(QString languageId, KernelSpec spec, QString program,
                             sdk::SessionOptions options, QObject *parent)
    : sdk::Session(parent),
      m_languageId(std::move(languageId)),
      m_spec(std::move(spec)),
      m_program(std::move(program)),
      m_options(std::move(options)),
      m_timings(KernelTimings::fromSettings(m_options.settings)),
      m_environment(m_options.environment),
      m_workingDirectory(m_options.workingDirectory)
{
    m_info.language = m_languageId;
    for (QTimer *timer : {&m_startTimer, &m_interruptKillTimer})
        timer->setSingleShot(true);
    m_startTimer.setInterval(m_timings.startTimeoutMs);
    m_kernelInfoTimer.setInterval(200);
    m_heartbeatTimer.setInterval(m_timings.heartbeatIntervalMs);
    m_interruptKillTimer.setInterval(m_timings.interruptKillMs);
    m_interruptRepeatTimer.setInterval(m_timings.interruptRepeatMs);
    connect(&m_interruptRepeatTimer, &QTimer::timeout, this, &KernelSession::sendInterrupt);
    m_shutdownTimer.setInterval(m_timings.shutdownGraceMs);
    m_stdinWaitTimer.setSingleShot(true);
    m_stdinWaitTimer.setInterval(kStdinWaitMs);
    connect(&m_stdinWaitTimer, &QTimer::timeout, this, [this] {
        m_stdinWaitOver = true;
        readyIfUp();
    });
    connect(&m_startTimer, &QTimer::timeout, this, [this] {
        lose(QStringLiteral("the kernel did not answer within %1 ms of its start")
                 .arg(m_timings.startTimeoutMs),
             QStringLiteral("WorkerDied"));
    });
    connect(&m_kernelInfoTimer, &QTimer::timeout, this, &KernelSession::sendKernelInfo);
    connect(&m_heartbeatTimer, &QTimer::timeout, this, &KernelSession::onHeartbeatTick);
    connect(&m_interruptKillTimer, &QTimer::timeout, this, [this] {
        if (!m_run)
            return;
        m_run->interruptRequested = true;
        lose(QStringLiteral("the kernel did not stop within %1 ms of the interrupt and was "
                            "killed; its state is lost").arg(m_timings.interruptKillMs),
             QStringLiteral("WorkerKilled"));
    });
    connect(&m_shutdownTimer, &QTimer::timeout, this, [this] {
        // SIGTERM after the grace, SIGKILL after another.
        static constexpr int kRungs[] = {SIGTERM, SIGKILL};
        const int rung = m_shutdownTimer.property("rung").toInt();
        if (rung < 2) {
            signalGroup(kRungs[rung]);
            m_shutdownTimer.setProperty("rung", rung + 1);
        }
    });
}

KernelSession::~KernelSession()
{
    failPendingReplies(QStringLiteral("the session ended"));
    stopKernel();
}

void KernelSession::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    emit stateChanged(state);
}

void KernelSession::emitLater(const Event &e)
{
    QMetaObject::invokeMethod(this, [this, e] { emit event(e); }, Qt::QueuedConnection);
}

void KernelSession::start()
{
    if (m_state != State::NotStarted)
        return;
    setState(State::Starting);
    QString error;
    if (!launch(&error)) {
        setState(State::Dead);
        QMetaObject::invokeMethod(this, [this, error] { emit failed(error); }, Qt::QueuedConnection);
    }
}

bool KernelSession::launch(QString *error)
{
    m_kernelInfoReplied = false;
    m_ioPubSeen = false;
    m_up = false;
    m_hasRun = false;
    m_missedBeats = 0;
    m_beatAnswered = true;
    m_stderrTail.clear();

    const QString base = qEnvironmentVariable("XDG_RUNTIME_DIR");
    m_runtimeDir = std::make_unique<QTemporaryDir>(
        QDir(base.isEmpty() || !QFileInfo(base).isWritable() ? QDir::tempPath() : base)
            .filePath(QStringLiteral("replhost-kernel-XXXXXX")));
    if (!m_runtimeDir->isValid()) {
        *error = QStringLiteral("cannot make a directory for the kernel's connection file: %1")
                     .arg(m_runtimeDir->errorString());
        return false;
    }
    QFile::setPermissions(m_runtimeDir->path(),
                          QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);

    const bool tcp = m_options.settings.value(QLatin1String("transport")).toString()
                     == QLatin1String("tcp");
    QJsonObject connection{
        {QStringLiteral("transport"), tcp ? QStringLiteral("tcp") : QStringLiteral("ipc")},
        {QStringLiteral("signature_scheme"), QStringLiteral("hmac-sha256")},
        {QStringLiteral("key"), QUuid::createUuid().toString(QUuid::Id128)},
        {QStringLiteral("kernel_name"), m_spec.name},
    };
    const QString ipcBase = m_runtimeDir->filePath(QStringLiteral("k"));
    connection.insert(QStringLiteral("ip"), tcp ? QStringLiteral("127.0.0.1") : ipcBase);
    static const char *const kPorts[] = {"shell_port", "control_port", "stdin_port", "iopub_port",
                                         "hb_port"};
    std::array<QString, 5> addresses;
    for (int c = 0; c < 5; ++c) {
        const int port = tcp ? freeLoopbackPort() : c + 1;
        if (port == 0) {
            *error = QStringLiteral("no free loopback port for the kernel");
            return false;
        }
        connection.insert(QLatin1String(kPorts[c]), port);
        addresses[c] = tcp ? QStringLiteral("tcp://127.0.0.1:%1").arg(port)
                           : QStringLiteral("ipc://%1-%2").arg(ipcBase).arg(port);
    }
    const QString connectionFile = m_runtimeDir->filePath(QStringLiteral("kernel.json"));
    QFile file(connectionFile);
    if (!file.open(QIODevice::WriteOnly)
        || !file.setPermissions(QFile::ReadOwner | QFile::WriteOwner)
        || file.write(QJsonDocument(connection).toJson()) < 0 || !file.flush()) {
        *error = QStringLiteral("cannot write the kernel's connection file %1: %2")
                     .arg(connectionFile, file.errorString());
        return false;
    }
    file.close();

    auto *channels = new KernelChannels(
        WireCodec(connection.value(QLatin1String("key")).toString().toLatin1(),
                  QUuid::createUuid().toString(QUuid::WithoutBraces)),
        addresses, this);
    m_channels = channels;
    if (!channels->open(error)) {
        *error = QStringLiteral("cannot connect to the kernel's sockets: %1").arg(*error);
        return false;
    }
    connect(channels, &KernelChannels::received, this, &KernelSession::onReceived);
    connect(channels, &KernelChannels::heartbeat, this, [this] { m_beatAnswered = true; });
    connect(channels, &KernelChannels::stdinConnected, this, &KernelSession::readyIfUp);
    m_stdinWaitOver = false;
    connect(channels, &KernelChannels::rejected, this,
            [this](KernelChannels::Channel, const QString &reason) {
                // Dropped, as the protocol requires; said where it can be seen.
                emit event(Event::stream(m_run ? m_run->id : QString(), QStringLiteral("stderr"),
                                         QStringLiteral("[replhost] dropped a kernel message: %1\n")
                                             .arg(reason)));
            });

    QStringList argv = kernelCommand(m_spec, connectionFile);
    argv.removeFirst();
    const Result<sdk::ConfinedCommand> command =
        sdk::confinedCommand(m_options.settings, m_program, argv, m_workingDirectory);
    if (!command) {
        *error = command.error().message;
        return false;
    }
    QProcessEnvironment environment;
    for (auto it = m_environment.cbegin(); it != m_environment.cend(); ++it)
        environment.insert(it.key(), it.value());
    for (auto it = m_spec.env.cbegin(); it != m_spec.env.cend(); ++it)
        environment.insert(it.key(), it.value());

    auto *process = new QProcess(this);
    m_process = process;
    process->setProgram(command->argv.first());
    process->setArguments(command->argv.mid(1));
    process->setProcessEnvironment(environment);
    process->setWorkingDirectory(m_workingDirectory);
    process->setStandardInputFile(QProcess::nullDevice());
    process->setChildProcessModifier([] {
        // A group of its own (interrupts and kills reach everything it starts), and the default
        // signal dispositions and mask, whatever the host's are.
        ::setsid();
        for (int sig = 1; sig < NSIG; ++sig)
            ::signal(sig, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
    });
    connect(process, &QProcess::readyReadStandardOutput, this,
            [this] { onProcessOutput(QProcess::StandardOutput); });
    connect(process, &QProcess::readyReadStandardError, this,
            [this] { onProcessOutput(QProcess::StandardError); });
    connect(process, &QProcess::finished, this, &KernelSession::onProcessFinished);
    connect(process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError processError) {
        if (processError == QProcess::FailedToStart)
            lose(QStringLiteral("the kernel could not be started: %1")
                     .arg(m_process ? m_process->errorString() : QString()),
                 QStringLiteral("WorkerDied"));
    });
    process->start();
    m_info.pid = process->processId();
    m_startTimer.start();
    sendKernelInfo();
    m_kernelInfoTimer.start();
    return true;
}

void KernelSession::signalGroup(int signal)
{
    if (m_process && m_process->processId() > 0)
        ::kill(-pid_t(m_process->processId()), signal);
}

void KernelSession::stopKernel()
{
    m_startTimer.stop();
    m_kernelInfoTimer.stop();
    m_heartbeatTimer.stop();
    m_interruptKillTimer.stop();
    m_interruptRepeatTimer.stop();
    m_shutdownTimer.stop();
    m_stdinWaitTimer.stop();
    if (m_channels) {
        m_channels->disconnect(this);
        m_channels->deleteLater();
        m_channels = nullptr;
    }
    if (m_process) {
        QProcess *process = m_process;
        m_process = nullptr;
        process->disconnect(this);
        const pid_t group = pid_t(process->processId());
        if (group > 0)
            ::kill(-group, SIGKILL);
        process->waitForFinished(2000);
        delete process;
    }
    m_runtimeDir.reset();
}

void KernelSession::sendKernelInfo()
{
    if (!m_channels)
        return;
    const WireMessage request =
        m_channels->codec().make(QStringLiteral("kernel_info_request"), {});
    m_kernelInfoId = request.id();
    m_channels->send(KernelChannels::Shell, request);
}

void KernelSession::onReceived(KernelChannels::Channel channel, const WireMessage &message)
{
    if (channel == KernelChannels::IoPub) {
        onIoPub(message);
        return;
    }
    if (channel == KernelChannels::Stdin) {
        if (message.type() == QLatin1String("input_request"))
            onInputRequest(message);
        return;
    }
    if (channel != KernelChannels::Shell)
        return;
    const QString type = message.type();
    if (type == QLatin1String("kernel_info_reply")) {
        const QJsonObject language = message.content.value(QLatin1String("language_info")).toObject();
        m_info.languageVersion = language.value(QLatin1String("version")).toString();
        m_info.implementation = message.content.value(QLatin1String("implementation")).toString();
        m_kernelInfoReplied = true;
        readyIfUp();
    } else if (type == QLatin1String("execute_reply")) {
        if (m_run && message.parentId() == m_run->messageId) {
            m_run->replied = true;
            m_interruptRepeatTimer.stop();
            m_run->replyStatus = message.content.value(QLatin1String("status")).toString();
            finishRunIfComplete();
        }
    } else if (type == QLatin1String("complete_reply")) {
        const ReplyCallback reply = m_completions.take(message.parentId());
        if (!reply)
            return;
        const QJsonObject &c = message.content;
        if (c.value(QLatin1String("status")).toString() != QLatin1String("ok")) {
            reply(makeError(QStringLiteral("failed"),
                            QStringLiteral("the kernel could not complete: %1")
                                .arg(c.value(QLatin1String("evalue")).toString())));
            return;
        }
        reply(QJsonObject{{QStringLiteral("matches"), c.value(QLatin1String("matches"))},
                          {QStringLiteral("cursor_start"), c.value(QLatin1String("cursor_start"))},
                          {QStringLiteral("cursor_end"), c.value(QLatin1String("cursor_end"))}});
    }
}

void KernelSession::onIoPub(const WireMessage &message)
{
    if (!m_ioPubSeen) {
        m_ioPubSeen = true;
        readyIfUp();
    }
    const QString type = message.type();
    const bool ofRun = m_run && !m_run->messageId.isEmpty()
                       && message.parentId() == m_run->messageId;
    const QString id = ofRun ? m_run->id : QString();
    const QJsonObject &c = message.content;
    if (type == QLatin1String("stream")) {
        // Output of no run (a thread of an earlier one) is background output.
        emit event(Event::stream(id, c.value(QLatin1String("name")).toString(),
                                 c.value(QLatin1String("text")).toString()));
        return;
    }
    if (!ofRun)
        return;
    if (type == QLatin1String("status")) {
        if (c.value(QLatin1String("execution_state")).toString() == QLatin1String("idle")) {
            m_run->idle = true;
            finishRunIfComplete();
        }
    } else if (type == QLatin1String("execute_result")) {
        emit event(Event::result(id, m_run->executionCount,
                                 mimeBundle(c.value(QLatin1String("data")).toObject()),
                                 c.value(QLatin1String("metadata")).toObject()));
    } else if (type == QLatin1String("display_data") || type == QLatin1String("update_display_data")) {
        const QString displayId = c.value(QLatin1String("transient")).toObject()
                                      .value(QLatin1String("display_id")).toString();
        emit event(Event::display(id, mimeBundle(c.value(QLatin1String("data")).toObject()),
                                  c.value(QLatin1String("metadata")).toObject(), displayId,
                                  type == QLatin1String("update_display_data")));
    } else if (type == QLatin1String("clear_output")) {
        emit event(Event::clearOutput(id, c.value(QLatin1String("wait")).toBool()));
    } else if (type == QLatin1String("error")) {
        QStringList traceback;
        for (const QJsonValue &line : c.value(QLatin1String("traceback")).toArray())
            traceback.append(line.toString());
        emit event(Event::error(id, c.value(QLatin1String("ename")).toString(),
                                c.value(QLatin1String("evalue")).toString(), traceback));
    }
}

void KernelSession::onInputRequest(const WireMessage &message)
{
    const bool ofRun = m_run && !m_run->messageId.isEmpty()
                       && message.parentId() == m_run->messageId;
    if (!ofRun || !m_run->allowInput || m_run->interruptRequested) {
        // Nobody can answer (or the run is being interrupted): the end of input, at once.
        sendInputReply(message.header, kEndOfInput);
        return;
    }
    m_run->inputRequest = message.header;
    emit event(Event::inputRequest(m_run->id, message.content.value(QLatin1String("prompt")).toString(),
                                   message.content.value(QLatin1String("password")).toBool()));
}

void KernelSession::sendInputReply(const QJsonObject &requestHeader, const QString &value)
{
    if (m_channels)
        m_channels->send(KernelChannels::Stdin,
                         m_channels->codec().make(QStringLiteral("input_reply"),
                                                  {{QStringLiteral("value"), value}}, requestHeader));
}

bool KernelSession::answerInput(const QString &executionId, const QString &value, bool eof)
{
    if (!m_run || m_run->id != executionId || m_run->inputRequest.isEmpty() || !m_channels)
        return false;
    sendInputReply(std::exchange(m_run->inputRequest, {}), eof ? kEndOfInput : value);
    return true;
}

void KernelSession::readyIfUp()
{
    if (m_up || !m_kernelInfoReplied || !m_ioPubSeen || !m_channels)
        return;
    if (!m_channels->isStdinConnected() && !m_stdinWaitOver) {
        if (!m_stdinWaitTimer.isActive())
            m_stdinWaitTimer.start();
        return;
    }
    m_up = true;
    m_stdinWaitTimer.stop();
    onKernelReady();
}

void KernelSession::onKernelReady()
{
    m_startTimer.stop();
    m_kernelInfoTimer.stop();
    m_heartbeatTimer.start();
    if (m_run) {
        // A restart for the run's environment: the run goes on.
        setState(State::Busy);
        if (m_run->interruptRequested) {
            finishRun(QStringLiteral("interrupted"));
            return;
        }
        sendExecute();
        return;
    }
    setState(State::Idle);
    if (!m_ready) {
        m_ready = true;
        emit ready();
    }
}

void KernelSession::execute(const sdk::ExecuteRequest &request)
{
    if (m_state != State::Idle) {
        emitLater(Event::error(request.id, QStringLiteral("Busy"),
                               QStringLiteral("the kernel is not idle; runs are queued by the host")));
        emitLater(Event::done(request.id, QStringLiteral("aborted")));
        return;
    }
    emitLater(Event::started(request.id, request.executionCount));
    if (!request.env.exec.isEmpty()) {
        emitLater(Event::error(
            request.id, QStringLiteral("Unsupported"),
            QStringLiteral("a Jupyter kernel takes its environment when it starts: set the "
                           "variables on the context or the workspace instead of the run")));
        emitLater(Event::done(request.id, QStringLiteral("error")));
        return;
    }
    Run run;
    run.id = request.id;
    run.code = request.code;
    run.executionCount = request.executionCount;
    run.allowInput = request.allowInput;
    run.clock.start();
    m_run = run;
    setState(State::Busy);

    // What only a start can give the kernel: a changed environment, another directory.
    QMap<QString, QString> environment = m_environment;
    for (auto it = request.env.context.set.cbegin(); it != request.env.context.set.cend(); ++it)
        environment.insert(it.key(), it.value());
    for (const QString &key : request.env.context.unset)
        environment.remove(key);
    QStringList changed;
    for (auto it = environment.cbegin(); it != environment.cend(); ++it) {
        if (m_environment.value(it.key(), QString()) != it.value() || !m_environment.contains(it.key()))
            changed.append(it.key());
    }
    for (auto it = m_environment.cbegin(); it != m_environment.cend(); ++it) {
        if (!environment.contains(it.key()))
            changed.append(it.key());
    }
    const bool moved = !request.cwd.isEmpty()
                       && QDir(request.cwd).canonicalPath() != QDir(kernelCwd()).canonicalPath();
    if (changed.isEmpty() && !moved) {
        QMetaObject::invokeMethod(this, [this, id = request.id] {
            if (!m_run || m_run->id != id || !m_run->messageId.isEmpty())
                return;
            if (m_run->interruptRequested) {
                finishRun(QStringLiteral("interrupted"));
                return;
            }
            sendExecute();
        }, Qt::QueuedConnection);
        return;
    }
    const bool hadState = m_hasRun;
    m_environment = environment;
    if (moved)
        m_workingDirectory = request.cwd;
    m_run->restarted = true;
    if (hadState) {
        changed.sort();
        emitLater(Event::other(
            request.id, QStringLiteral("state_reset"),
            {{QStringLiteral("reason"),
              QStringLiteral("the kernel was restarted to take %1; variables from earlier runs "
                             "are gone")
                  .arg(changed.isEmpty() ? QStringLiteral("the new working directory")
                                         : QStringLiteral("the changed environment (%1)")
                                               .arg(changed.join(QStringLiteral(", "))))}}));
    }
    stopKernel();
    QString error;
    if (!launch(&error))
        QMetaObject::invokeMethod(this, [this, error] { lose(error, QStringLiteral("WorkerDied")); },
                                  Qt::QueuedConnection);
}

void KernelSession::sendExecute()
{
    if (!m_channels || !m_run)
        return;
    const WireMessage request = m_channels->codec().make(
        QStringLiteral("execute_request"),
        {{QStringLiteral("code"), m_run->code},
         {QStringLiteral("silent"), false},
         {QStringLiteral("store_history"), true},
         {QStringLiteral("user_expressions"), QJsonObject()},
         {QStringLiteral("allow_stdin"), m_run->allowInput},
         {QStringLiteral("stop_on_error"), true}});
    m_run->messageId = request.id();
    m_hasRun = true;
    if (!m_channels->send(KernelChannels::Shell, request))
        lose(QStringLiteral("the kernel's shell socket refused the request"), QStringLiteral("WorkerDied"));
}

void KernelSession::finishRunIfComplete()
{
    if (!m_run || !m_run->replied || !m_run->idle)
        return;
    const QString reply = m_run->replyStatus;
    QString status = QStringLiteral("ok");
    if (m_run->interruptRequested && reply != QLatin1String("ok"))
        status = QStringLiteral("interrupted");
    else if (reply == QLatin1String("error"))
        status = QStringLiteral("error");
    else if (reply == QLatin1String("abort") || reply == QLatin1String("aborted"))
        status = QStringLiteral("aborted");
    finishRun(status);
}

sdk::Event KernelSession::doneEvent(const Run &run, const QString &status, bool stateLost) const
{
    QJsonObject extra{
        {QStringLiteral("execution_count"), run.executionCount},
        {QStringLiteral("duration_ms"), double(run.clock.elapsed())},
        {QStringLiteral("state_lost"), stateLost},
        {QStringLiteral("streams_synced"), !stateLost},
    };
    const QString cwd = kernelCwd();
    if (!cwd.isEmpty())
        extra.insert(QStringLiteral("cwd"), cwd);
    return Event::done(run.id, status, extra);
}

void KernelSession::finishRun(const QString &status)
{
    if (!m_run)
        return;
    m_interruptKillTimer.stop();
    m_interruptRepeatTimer.stop();
    // What the kernel's process wrote itself and is still in its pipes belongs to the run.
    readProcessPipes();
    const Event done = doneEvent(*m_run, status, false);
    m_run.reset();
    // Idle before done: the host may send the next run from its slot.
    setState(State::Idle);
    emit event(done);
}

QString KernelSession::kernelCwd() const
{
    if (!m_process || m_process->processId() <= 0)
        return m_workingDirectory;
    const QString cwd = QFileInfo(QStringLiteral("/proc/%1/cwd").arg(m_process->processId()))
                            .symLinkTarget();
    return cwd.isEmpty() ? m_workingDirectory : cwd;
}

void KernelSession::interrupt(const QString &executionId)
{
    if (!m_run || m_run->id != executionId)
        return;
    m_run->interruptRequested = true;
    // The interrupt ends a wait for input in the kernel; an answer after it is refused.
    m_run->inputRequest = {};
    if (m_state == State::Starting || m_run->messageId.isEmpty())
        return;  // the run has not reached the kernel: it ends once the kernel is up
    setState(State::Interrupting);
    sendInterrupt();
    m_interruptRepeatTimer.start();
    m_interruptKillTimer.start();
}

void KernelSession::sendInterrupt()
{
    if (!m_run)
        return;
    if (m_spec.interruptByMessage && m_channels)
        m_channels->send(KernelChannels::Control,
                         m_channels->codec().make(QStringLiteral("interrupt_request"), {}));
    else
        signalGroup(SIGINT);
}

void KernelSession::complete(const QString &code, int cursor, ReplyCallback reply)
{
    if (m_state != State::Idle || !m_channels) {
        QMetaObject::invokeMethod(this, [reply] {
            reply(makeError(QStringLiteral("busy"), QStringLiteral("the kernel is not idle")));
        }, Qt::QueuedConnection);
        return;
    }
    const WireMessage request = m_channels->codec().make(
        QStringLiteral("complete_request"),
        {{QStringLiteral("code"), code}, {QStringLiteral("cursor_pos"), cursor}});
    m_completions.insert(request.id(), reply);
    m_channels->send(KernelChannels::Shell, request);
    QTimer::singleShot(m_timings.completeTimeoutMs, this, [this, id = request.id()] {
        if (const ReplyCallback pending = m_completions.take(id))
            pending(makeError(QStringLiteral("timeout"),
                              QStringLiteral("the kernel did not answer the completion request")));
    });
}

void KernelSession::failPendingReplies(const QString &message)
{
    const auto pending = std::exchange(m_completions, {});
    for (const ReplyCallback &reply : pending) {
        QMetaObject::invokeMethod(this, [reply, message] {
            reply(makeError(QStringLiteral("dead"), message));
        }, Qt::QueuedConnection);
    }
}

void KernelSession::shutdown()
{
    if (m_state == State::Dead || m_shuttingDown)
        return;
    m_shuttingDown = true;
    if (!m_process) {
        setState(State::Dead);
        QMetaObject::invokeMethod(this, [this] { emit terminated(true, QStringLiteral("shut down")); },
                                  Qt::QueuedConnection);
        return;
    }
    m_heartbeatTimer.stop();
    if (m_channels)
        m_channels->send(KernelChannels::Control,
                         m_channels->codec().make(QStringLiteral("shutdown_request"),
                                                  {{QStringLiteral("restart"), false}}));
    m_shutdownTimer.setProperty("rung", 0);
    m_shutdownTimer.start();
}

void KernelSession::onProcessOutput(QProcess::ProcessChannel channel)
{
    if (!m_process)
        return;
    m_process->setReadChannel(channel);
    const QByteArray bytes = m_process->readAll();
    if (channel == QProcess::StandardError) {
        m_stderrTail.append(bytes);
        if (m_stderrTail.size() > 4096)
            m_stderrTail = m_stderrTail.right(4096);
    }
    // What the kernel's process writes itself (a child process of R, a C library) rather than
    // sends on iopub: output of the run, if one is going.
    if (m_ready || m_run)
        emit event(Event::stream(m_run ? m_run->id : QString(),
                                 channel == QProcess::StandardError ? QStringLiteral("stderr")
                                                                    : QStringLiteral("stdout"),
                                 QString::fromUtf8(bytes)));
}

void KernelSession::readProcessPipes()
{
    for (const QProcess::ProcessChannel channel : {QProcess::StandardOutput, QProcess::StandardError}) {
        for (int turn = 0; turn < 16 && m_process; ++turn) {
            m_process->setReadChannel(channel);
            if (!m_process->waitForReadyRead(0))
                break;
        }
    }
}

void KernelSession::takeInWrittenOutput()
{
    if (m_channels)
        m_channels->drainAll();
    readProcessPipes();
}

QString KernelSession::stderrTail() const
{
    return QString::fromUtf8(m_stderrTail).trimmed();
}

void KernelSession::onProcessFinished(int exitCode, QProcess::ExitStatus status)
{
    if (m_shuttingDown) {
        std::optional<Event> done;
        if (m_run)
            done = doneEvent(*m_run, QStringLiteral("interrupted"), true);
        m_run.reset();
        stopKernel();
        setState(State::Dead);
        const QPointer<KernelSession> self(this);
        if (done) {
            emit event(*done);
            if (!self)
                return;
        }
        emit terminated(true, QStringLiteral("shut down"));
        return;
    }
    lose(status == QProcess::CrashExit
             ? QStringLiteral("the kernel was killed by a signal")
             : QStringLiteral("the kernel exited with status %1").arg(exitCode),
         QStringLiteral("WorkerDied"));
}

void KernelSession::onHeartbeatTick()
{
    if (m_state == State::Idle) {
        if (m_beatAnswered)
            m_missedBeats = 0;
        else if (++m_missedBeats >= m_timings.heartbeatMisses) {
            lose(QStringLiteral("the kernel stopped answering its heartbeat (%1 beats of %2 ms)")
                     .arg(m_missedBeats).arg(m_timings.heartbeatIntervalMs),
                 QStringLiteral("WorkerDied"));
            return;
        }
    } else {
        // A kernel may answer its heartbeat only between requests (IRkernel does): a long run
        // is bounded by its timeout, not by the heartbeat.
        m_missedBeats = 0;
    }
    m_beatAnswered = false;
    if (m_channels)
        m_channels->ping();
}

void KernelSession::lose(const QString &reason, const QString &ename)
{
    if (m_state == State::Dead)
        return;
    // Read what the process still has to say before it goes.
    if (m_process) {
        m_process->setReadChannel(QProcess::StandardError);
        m_stderrTail.append(m_process->readAllStandardError());
    }
    const QString tail = stderrTail();
    const bool wasReady = m_ready;
    std::optional<Event> error, done;
    if (m_run) {
        error = Event::error(m_run->id, ename,
                             tail.isEmpty() ? reason : QStringLiteral("%1; it said: %2").arg(reason, tail));
        done = doneEvent(*m_run, m_run->interruptRequested ? QStringLiteral("interrupted")
                                                           : QStringLiteral("error"),
                         true);
        m_run.reset();
    }
    failPendingReplies(reason);
    stopKernel();
    setState(State::Dead);
    // Any slot may delete the session.
    const QPointer<KernelSession> self(this);
    if (error) {
        emit event(*error);
        if (!self)
            return;
        emit event(*done);
        if (!self)
            return;
    }
    if (!wasReady)
        emit failed(tail.isEmpty() ? reason : QStringLiteral("%1: %2").arg(reason, tail));
    else
        emit terminated(false, reason);
}

} // namespace replhost::jupyter
