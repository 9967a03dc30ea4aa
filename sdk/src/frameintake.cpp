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
        return handleDone(std::move(*done));
    QJsonObject message;
    if (!FrameReader::parse(body, &message, error))
        return false;
    return handleMessage(message);
}

bool WorkerProcess::Private::handleDone(DoneFrame frame)
{
    // Read while the frame's body is at hand; the running execution's id string is shared
    // when it is the same text, which saves making one per run.
    const QLatin1StringView idText(frame.idText());
    const QString id = exec && exec->id == idText ? exec->id : QString(idText);
    if (!acceptsEventOf(QStringLiteral("done"), id))
        return true;
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

bool WorkerProcess::Private::acceptsEventOf(const QString &type, const QString &id) const
{
    if (!exec || id != exec->id || exec->doneReceived) {
        qCDebug(lcWorker) << "ignoring" << type << "of execution" << id;
        return false;
    }
    return true;
}

void WorkerProcess::Private::noteDone(bool hasMark, quint64 mark)
{
    exec->doneReceived = true;
    exec->doneMarked = hasMark;
    exec->doneMark = hasMark ? mark : 0;
    for (int i = 0; i < 2; ++i)
        exec->doneReads[i] = out[i].reads;
    // The run has ended in the worker: no more signals for it, even while its output drains.
    interrupts.stop();
}

bool WorkerProcess::Private::handleMessage(QJsonObject &message)
{
    const QString type = message.value(kType).toString();
    const QString id = message.value(kId).toString();
    if (type == QLatin1String("started") || type == QLatin1String("display")
        || type == QLatin1String("result") || type == QLatin1String("error")
        || type == QLatin1String("done"))
        return handleExecutionEvent(type, id, std::move(message));
    if (type == QLatin1String("complete_reply") || type == QLatin1String("variables_reply")
        || type == QLatin1String("error_reply"))
        return handleReply(type, id, message);
    // Snapshots (protocol §9): a "snapshot" event belongs to the running execution; the replies
    // answer snapshot and restore requests.
    if (type == QLatin1String("snapshot"))
        return handleExecutionEvent(type, id, std::move(message));
    if (type == QLatin1String("snapshot_reply") || type == QLatin1String("restore_reply"))
        return handleReply(type, id, message);
    if (type == QLatin1String("hello"))
        return handleHello(message);
    if (type == QLatin1String("log")) {
        qCDebug(lcWorker).noquote() << spec.program
                                    << message.value(QStringLiteral("level")).toString()
                                    << message.value(QStringLiteral("message")).toString();
        return true;
    }
    if (type == QLatin1String("shutdown_reply"))
        return true; // its exit follows; that is what counts
    // Newer drivers may send more: pass events of the running execution on, drop the rest.
    if (exec && id == exec->id && !exec->doneReceived) {
        QJsonObject fields = std::move(message);
        fields.remove(kType);
        fields.remove(kId);
        const bool hasMark = fields.contains(kMark);
        const quint64 mark = quint64(std::max<qint64>(0, fields.take(kMark).toInteger()));
        return enqueue(Event::other(id, type, fields), hasMark ? Barrier::Mark : Barrier::Position,
                       mark);
    }
    qCDebug(lcWorker) << "ignoring message of type" << type;
    return true;
}

bool WorkerProcess::Private::handleHello(const QJsonObject &message)
{
    if (state != State::Starting)
        return true;
    const int protocol = message.value(QStringLiteral("protocol")).toInt();
    if (protocol != kWorkerProtocolVersion)
        return endWorker(End::ProtocolError,
                         QStringLiteral("the driver speaks worker protocol %1, the host speaks %2")
                             .arg(protocol)
                             .arg(kWorkerProtocolVersion));
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

bool WorkerProcess::Private::handleExecutionEvent(const QString &type, const QString &id,
                                                  QJsonObject fields)
{
    if (!acceptsEventOf(type, id))
        return true;
    fields.remove(kType);
    fields.remove(kId);
    const bool hasMark = fields.contains(kMark);
    const quint64 mark = quint64(std::max<qint64>(0, fields.take(kMark).toInteger()));

    if (type == QLatin1String("started")) {
        if (exec->started)
            return true;
        exec->started = true;
        if (!fields.contains(QStringLiteral("execution_count")))
            fields.insert(QStringLiteral("execution_count"), exec->count);
        if (!enqueue(Event::other(id, type, fields), Barrier::None))
            return false;
        if (exec && exec->id == id && exec->interruptPending)
            return beginInterrupt();
        return true;
    }
    if (type == QLatin1String("done")) {
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

bool WorkerProcess::Private::handleReply(const QString &type, const QString &id,
                                         const QJsonObject &message)
{
    ReplyCallback reply = replies.take(id);
    if (!reply) {
        qCDebug(lcWorker) << "ignoring" << type << "for unknown request" << id;
        return true;
    }
    QPointer<WorkerProcess> guard(q);
    if (type == QLatin1String("error_reply")) {
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
