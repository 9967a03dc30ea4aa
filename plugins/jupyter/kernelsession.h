// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "kernelchannels.h"
#include "kernelspec.h"

#include <replhost/sdk/session.h>

#include <QElapsedTimer>
#include <QHash>
#include <QPointer>
#include <QProcess>
#include <QTemporaryDir>
#include <QTimer>

#include <memory>
#include <optional>

namespace replhost::jupyter {

// Timings of a kernel session, from the language's settings (docs/plugin-sdk.md names them).
struct KernelTimings {
    int startTimeoutMs = 60000;      // no kernel_info_reply and iopub message by then: failed()
    int heartbeatIntervalMs = 1000;  // a ping this often
    int heartbeatMisses = 10;        // unanswered pings in a row, while idle, that mean it is gone
    int interruptRepeatMs = 500;     // the interrupt again this often while the run goes on: a
                                     // kernel ignores one that comes before its cell starts
    int interruptKillMs = 10000;     // after an interrupt, kill the kernel if the run goes on
    int shutdownGraceMs = 2000;      // after shutdown_request, before SIGTERM and before SIGKILL
    int completeTimeoutMs = 10000;   // a complete_request without its reply by then fails

    static KernelTimings fromSettings(const QJsonObject &settings);
};

// One live Jupyter kernel for one context, through the kernel protocol 5.3: a Session of its own
// (not a WorkerProcess, since a kernel speaks ZeroMQ rather than the worker protocol).
//
// The kernel runs in a process group of its own, with the context's environment (the spec's
// "env" over it) and directory, and a connection file (mode 0600, in a private directory) that
// names ipc endpoints in the same directory, or loopback tcp ports with "transport": "tcp".
// It is ready when its kernel_info_reply and a first iopub message have arrived: kernel_info
// requests are repeated until iopub delivers, so no output of the first run is lost to the
// "slow joiner" subscription; and when the stdin socket is connected (or 2 s later, for a kernel
// without one), since a kernel's input_request to a peer it does not know yet is lost. A run is done when both its execute_reply and the iopub "idle"
// for it have arrived, in either order.
//
// The context's environment and directory reach a kernel only when it starts: a run that brings
// a change of the context's environment (or another directory) restarts the kernel first and
// says so with a "state_reset" event; an execution-only environment is refused with an error.
// A kernel that exits, or stops answering its heartbeat while idle, ends the run in progress
// with an error "WorkerDied" and state_lost, and the session is Dead (the host starts a new
// one). Interrupt follows the spec's interrupt_mode: SIGINT to the kernel's process group, or an
// interrupt_request on the control channel; a run that goes on interruptKillMs later is ended by
// killing the kernel (state_lost). A shutdown is a shutdown_request on the control channel, then
// SIGTERM to the kernel's group shutdownGraceMs later, then SIGKILL after another grace.
//
// Input (SDK 1.3): a run whose client can answer (ExecuteRequest::allowInput) is sent with
// allow_stdin, and the kernel's input_request on the stdin channel becomes an InputRequest
// event; answerInput() sends the input_reply, the end of input being "\x04" (jupyter_console's
// word for it, which ipykernel turns into EOFError). A kernel that asks although the run takes no
// input (IRkernel's readline() always asks) is answered with the end of input at once, so nothing
// waits for an answer that cannot come. An interrupt ends the wait as it ends the run.
//
// Threading: as every Session.
class KernelSession : public sdk::Session {
    Q_OBJECT
public:
    KernelSession(QString languageId, KernelSpec spec, QString program,
                  sdk::SessionOptions options, QObject *parent = nullptr);
    ~KernelSession() override;

    State state() const override { return m_state; }
    sdk::SessionInfo info() const override { return m_info; }
    void start() override;
    void execute(const sdk::ExecuteRequest &request) override;
    void interrupt(const QString &executionId) override;
    void complete(const QString &code, int cursor, ReplyCallback reply) override;
    void shutdown() override;

    // Delivers what the kernel has published and written and the session has not read yet
    // (the host calls it by name before it deletes a session with a run going).
    Q_INVOKABLE void takeInWrittenOutput();

    // Answers the input_request of the running execution `executionId` (by name, as the host
    // calls WorkerProcess::answerInput): `value` is the line, or with `eof` the end of input.
    // False, and nothing sent, when that execution is not waiting for input.
    Q_INVOKABLE bool answerInput(const QString &executionId, const QString &value, bool eof);

private:
    struct Run {
        QString id;
        QString messageId;  // of the execute_request; empty until sent
        QString code;
        int executionCount = 0;
        bool replied = false;
        bool idle = false;
        QString replyStatus;
        bool interruptRequested = false;
        bool restarted = false;  // the kernel was restarted for this run's environment
        bool allowInput = false;       // its client can answer input requests
        QJsonObject inputRequest;      // header of the unanswered input_request; empty if none
        QElapsedTimer clock;
    };

    bool launch(QString *error);
    void stopKernel();
    void setState(State state);
    void onReceived(KernelChannels::Channel channel, const WireMessage &message);
    void onIoPub(const WireMessage &message);
    void onInputRequest(const WireMessage &message);
    void sendInputReply(const QJsonObject &requestHeader, const QString &value);
    void onKernelReady();
    void readyIfUp();
    void onProcessFinished(int exitCode, QProcess::ExitStatus status);
    void onHeartbeatTick();
    void onProcessOutput(QProcess::ProcessChannel channel);
    void sendKernelInfo();
    void sendExecute();
    void finishRunIfComplete();
    void finishRun(const QString &status);
    sdk::Event doneEvent(const Run &run, const QString &status, bool stateLost) const;
    void lose(const QString &reason, const QString &ename);
    void failPendingReplies(const QString &message);
    void signalGroup(int signal);
    void sendInterrupt();
    QString kernelCwd() const;
    QString stderrTail() const;
    void readProcessPipes();
    void emitLater(const sdk::Event &event);

    const QString m_languageId;
    const KernelSpec m_spec;
    const QString m_program;
    const sdk::SessionOptions m_options;
    const KernelTimings m_timings;
    QMap<QString, QString> m_environment;  // the context's, as the kernel got it
    QString m_workingDirectory;

    State m_state = State::NotStarted;
    sdk::SessionInfo m_info;
    std::unique_ptr<QTemporaryDir> m_runtimeDir;
    QPointer<QProcess> m_process;
    QPointer<KernelChannels> m_channels;
    bool m_ready = false;           // ready() was emitted
    bool m_kernelInfoReplied = false;
    bool m_ioPubSeen = false;
    bool m_up = false;              // this kernel was found ready (once per launch)
    bool m_stdinWaitOver = false;   // m_stdinWaitTimer ran out before the stdin socket connected
    bool m_hasRun = false;          // the kernel has run code since it started
    bool m_shuttingDown = false;
    QString m_kernelInfoId;
    QByteArray m_stderrTail;
    std::optional<Run> m_run;
    QHash<QString, ReplyCallback> m_completions;  // by complete_request msg_id

    QTimer m_startTimer;
    QTimer m_kernelInfoTimer;
    QTimer m_heartbeatTimer;
    QTimer m_interruptKillTimer;
    QTimer m_interruptRepeatTimer;
    QTimer m_shutdownTimer;
    QTimer m_stdinWaitTimer;        // the longest wait for the stdin socket
    int m_missedBeats = 0;
    bool m_beatAnswered = true;
};

} // namespace replhost::jupyter
