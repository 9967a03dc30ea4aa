// SPDX-License-Identifier: Apache-2.0
// WorkerProcess, fd 4: reading the worker's event frames and taking them in (protocol §2-§4).
#include "workerprocess_p.h"

#include "replhost/sdk/version.h"

#include <cerrno>
#include <utility>

#include <unistd.h>

namespace replhost::sdk {

using namespace workerprocess;

bool WorkerProcess::Private::readEvents()
{
    if (eventFd < 0)
        return true;
    if (readingEvents) {
        // Re-entered from a nested event loop or from the stream side: the read on the stack
        // finishes the job. Quiet the level-triggered notifier until then.
        if (eventNotifier && eventNotifier->isEnabled()) {
            eventNotifier->setEnabled(false);
            eventsDeferred = true;
        }
        return true;
    }
    readingEvents = true;
    ++readDepth;
    bool protocolError = false;
    for (int n = 0; n < kMaxReadsPerWakeup; ++n) {
        const ssize_t got = ::read(eventFd, eventBuffer.get(), size_t(kReadChunk));
        if (got > 0) {
            bool alive = true;
            const bool ok = frames.feed(QByteArrayView(eventBuffer.get(), got),
                                              [this, &alive](QByteArrayView body, QString *error) {
                                                  const bool handled = handleFrame(body, error);
                                                  // A malformed body leaves us alive.
                                                  alive = handled || !error->isEmpty();
                                                  return handled;
                                              });
            if (!alive)
                return false;
            if (!ok) {
                protocolError = true;
                break;
            }
            if (got < kReadChunk)
                break;
            continue;
        }
        if (got < 0 && errno == EINTR)
            continue;
        if (got == 0 || errno != EAGAIN) {
            // Closed or broken: the worker is dying or closed fd 4 itself. Liveness comes from
            // the pidfd, so only stop listening (a level-triggered EOF would fire forever).
            eventsEof = true;
            if (eventNotifier)
                eventNotifier->setEnabled(false);
        }
        break;
    }
    readingEvents = false;
    --readDepth;
    if (eventsDeferred) {
        eventsDeferred = false;
        if (eventNotifier && !eventsEof)
            eventNotifier->setEnabled(true);
    }
    if (protocolError && !endWorker(End::ProtocolError, frames.error()))
        return false;
    return finishReads();
}

bool WorkerProcess::Private::handleFrame(QByteArrayView body, QString *error)
{
    if (std::optional<DoneFrame> done = DoneFrame::scan(body))
        return handleDone(std::move(*done), error);
    QJsonObject message;
    if (!FrameReader::parse(body, &message, error))
        return false;
    Result<WorkerMessage> kind = checkWorkerFrame(message);
    if (!kind) {
        *error = kind.error().message;
        return false;
    }
    return handleMessage(message, *kind, error);
}

bool WorkerProcess::Private::handleDone(DoneFrame frame, QString *error)
{
    // scan() takes only a frame that checkWorkerFrame() would pass; what is left is whether it
    // fits the run. Read while the frame's body is at hand; the running execution's id string
    // is shared when it is the same text, which saves making one per run.
    const QLatin1StringView idText(frame.idText());
    const QString id = exec && exec->id == idText ? exec->id : QString(idText);
    if (!fitsRun(WorkerMessage::Done, id, error))
        return error->isEmpty();
    noteDone(frame.hasMark(), frame.mark());
    Event done;
    done.kind = Event::Kind::Done;
    done.type = QStringLiteral("done");
    done.executionId = id;
    const bool hasMark = frame.hasMark();
    const quint64 mark = frame.mark();
    return enqueue(std::move(done), hasMark ? Barrier::Mark : Barrier::Position, mark,
                   std::move(frame));
}

bool WorkerProcess::Private::fitsRun(WorkerMessage kind, const QString &id, QString *error) const
{
    const bool lenient = kind == WorkerMessage::Display || kind == WorkerMessage::Error
            || kind == WorkerMessage::ClearOutput;
    const char *const type = kind == WorkerMessage::Started ? "started"
            : kind == WorkerMessage::Display                 ? "display"
            : kind == WorkerMessage::ClearOutput             ? "clear_output"
            : kind == WorkerMessage::Result                  ? "result"
            : kind == WorkerMessage::Error                   ? "error"
            : kind == WorkerMessage::Snapshot                ? "snapshot"
            : kind == WorkerMessage::InputRequest            ? "input_request"
                                                             : "done";
    const bool running = exec && id == exec->id && !exec->doneReceived;
    if (running) {
        if (kind == WorkerMessage::Started) {
            if (!exec->started)
                return true;
            // A driver with implicit_started may send one anyway (protocol §4).
            if (implicitStarted)
                return false;
            *error = QStringLiteral("a second `started` for execution %1").arg(quotedExcerpt(id));
            return false;
        }
        if (!exec->started) {
            *error = QStringLiteral("a `%1` for execution %2 before its `started`")
                             .arg(QLatin1StringView(type), quotedExcerpt(id));
            return false;
        }
        return true;
    }
    const bool ended = !id.isEmpty() && id == endedId;
    if (lenient && (id.isEmpty() || ended)) {
        qCDebug(lcWorker) << "dropping" << type << "of" << (ended ? "ended execution" : "no execution")
                          << id;
        return false;
    }
    if (ended)
        *error = kind == WorkerMessage::Done
                ? QStringLiteral("a second `done` for execution %1").arg(quotedExcerpt(id))
                : QStringLiteral("a `%1` for execution %2 after its `done`")
                          .arg(QLatin1StringView(type), quotedExcerpt(id));
    else if (exec)
        *error = QStringLiteral("a `%1` for execution %2 while execution %3 runs")
                         .arg(QLatin1StringView(type), quotedExcerpt(id), quotedExcerpt(exec->id));
    else
        *error = QStringLiteral("a `%1` for execution %2 while no execution runs")
                         .arg(QLatin1StringView(type), quotedExcerpt(id));
    return false;
}

void WorkerProcess::Private::noteDone(bool hasMark, quint64 mark)
{
    exec->doneReceived = true;
    exec->inputPending = false;
    exec->doneMarked = hasMark;
    exec->doneMark = hasMark ? mark : 0;
    for (int i = 0; i < 2; ++i)
        exec->doneReads[i] = out[i].reads;
    endedId = exec->id;
    // The run has ended in the worker: no more signals for it, even while its output drains.
    interrupts.stop();
}

bool WorkerProcess::Private::handleMessage(QJsonObject &message, WorkerMessage kind,
                                           QString *error)
{
    switch (kind) {
    case WorkerMessage::Started:
    case WorkerMessage::Display:
    case WorkerMessage::ClearOutput:
    case WorkerMessage::InputRequest:
    case WorkerMessage::Result:
    case WorkerMessage::Error:
    case WorkerMessage::Done:
    // Snapshots (protocol §9): a `snapshot` event belongs to the running execution; the replies
    // answer snapshot and restore requests.
    case WorkerMessage::Snapshot: {
        const QString type = message.value(kType).toString();
        const QString id = message.value(kId).toString();
        return handleExecutionEvent(kind, type, id, std::move(message), error);
    }
    case WorkerMessage::CompleteReply:
    case WorkerMessage::VariablesReply:
    case WorkerMessage::ErrorReply:
    case WorkerMessage::SnapshotReply:
    case WorkerMessage::RestoreReply:
        return handleReply(kind, message.value(kId).toString(), message, error);
    case WorkerMessage::Hello:
        return handleHello(message, error);
    case WorkerMessage::Log:
        qCDebug(lcWorker).noquote() << spec.program
                                    << message.value(QStringLiteral("level")).toString()
                                    << message.value(QStringLiteral("message")).toString();
        return true;
    case WorkerMessage::ShutdownReply:
        return true; // its exit follows; that is what counts
    }
    return true;
}

bool WorkerProcess::Private::handleHello(const QJsonObject &message, QString *error)
{
    if (state != State::Starting) {
        *error = QStringLiteral("a second `hello`");
        return false;
    }
    const int protocol = message.value(QStringLiteral("protocol")).toInt();
    if (protocol != kWorkerProtocolVersion) {
        *error = QStringLiteral("the driver speaks worker protocol %1, the host speaks %2")
                         .arg(protocol)
                         .arg(kWorkerProtocolVersion);
        return false;
    }
    startTimer.stop();
    info.language = message.value(QStringLiteral("language")).toString();
    info.languageVersion = message.value(QStringLiteral("language_version")).toString();
    info.implementation = message.value(QStringLiteral("implementation")).toString();
    // In a sandbox the driver's pid is the one inside its PID namespace, which means nothing to
    // the host: the host's own (bwrap's, and the process group's) is given instead.
    info.pid = confinement.sandboxed() ? pid : message.value(QStringLiteral("pid")).toInteger(pid);
    info.capabilities = message.value(QStringLiteral("capabilities")).toObject();
    implicitStarted = info.capabilities.value(QStringLiteral("implicit_started")).toBool();
    if (!setState(State::Idle))
        return false;
    QPointer<WorkerProcess> guard(q);
    emit q->ready();
    return !guard.isNull();
}

bool WorkerProcess::Private::handleExecutionEvent(WorkerMessage kind, const QString &type,
                                                  const QString &id, QJsonObject fields,
                                                  QString *error)
{
    if (!fitsRun(kind, id, error))
        return error->isEmpty();
    fields.remove(kType);
    fields.remove(kId);
    const bool hasMark = fields.contains(kMark);
    const quint64 mark = quint64(fields.take(kMark).toInteger());

    if (kind == WorkerMessage::Started) {
        exec->started = true;
        if (!fields.contains(QStringLiteral("execution_count")))
            fields.insert(QStringLiteral("execution_count"), exec->count);
        if (!enqueue(Event::other(id, type, fields), Barrier::None))
            return false;
        if (exec && exec->id == id && exec->interruptPending)
            return beginInterrupt();
        return true;
    }
    if (kind == WorkerMessage::InputRequest) {
        // Only a run that someone can answer may ask, and one question at a time: the driver
        // waits for its answer before it can ask again.
        if (!exec->inputAllowed) {
            *error = QStringLiteral("an `input_request` for execution %1, which takes no input")
                             .arg(quotedExcerpt(id));
            return false;
        }
        if (exec->inputPending) {
            *error = QStringLiteral("a second `input_request` for execution %1 before the first "
                                    "was answered")
                             .arg(quotedExcerpt(id));
            return false;
        }
        exec->inputPending = true;
        fields.insert(QStringLiteral("prompt"), fields.value(QLatin1String("prompt")).toString());
        fields.insert(QStringLiteral("password"), fields.value(QLatin1String("password")).toBool());
    }
    if (kind == WorkerMessage::Done) {
        noteDone(hasMark, mark);
        // Not through Event::done(): release() sets state_lost and streams_synced, and the
        // driver's fields are kept as they are, so only a missing status needs filling in.
        if (!fields.value(QLatin1String("status")).isString())
            fields.insert(QStringLiteral("status"), QStringLiteral("ok"));
        Event done;
        done.kind = Event::Kind::Done;
        done.type = QStringLiteral("done");
        done.executionId = id;
        done.fields = std::move(fields);
        return enqueue(std::move(done), hasMark ? Barrier::Mark : Barrier::Position, mark);
    }
    return enqueue(Event::other(id, type, fields), hasMark ? Barrier::Mark : Barrier::Position,
                   mark);
}

bool WorkerProcess::Private::handleReply(WorkerMessage kind, const QString &id,
                                         const QJsonObject &message, QString *error)
{
    const auto pending = replies.constFind(id);
    if (pending == replies.constEnd()) {
        // Nothing waits for it, so it can do no harm: a driver that answered a request twice.
        qCDebug(lcWorker) << "ignoring a reply for unknown request" << id;
        return true;
    }
    // Request ids say what was asked (nextId()): an answer of the other kind is forged.
    const QLatin1String prefix = kind == WorkerMessage::CompleteReply ? QLatin1String("rh-complete-")
            : kind == WorkerMessage::VariablesReply ? QLatin1String("rh-variables-")
            : kind == WorkerMessage::SnapshotReply  ? QLatin1String("rh-snapshot-")
                                                    : QLatin1String("rh-restore-");
    const bool asked = kind == WorkerMessage::ErrorReply || id.startsWith(prefix);
    if (!asked) {
        *error = QStringLiteral("a `%1` for request %2, which asked for something else")
                         .arg(message.value(kType).toString(), quotedExcerpt(id));
        return false;
    }
    ReplyCallback reply = replies.take(id);
    QPointer<WorkerProcess> guard(q);
    if (kind == WorkerMessage::ErrorReply) {
        reply(makeError(QStringLiteral("unsupported"),
                        QStringLiteral("the driver rejected the request: %1")
                            .arg(message.value(QStringLiteral("reason")).toString())));
    } else {
        QJsonObject fields = message;
        fields.remove(kType);
        fields.remove(kId);
        reply(fields);
    }
    return !guard.isNull();
}

} // namespace replhost::sdk
