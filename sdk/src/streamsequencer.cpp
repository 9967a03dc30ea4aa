// SPDX-License-Identifier: Apache-2.0
// WorkerProcess, fd 1 and fd 2: reading the worker's output, and the sync barrier (protocol §5)
// that orders it with the events, so that no output of a run arrives after its done.
#include "workerprocess_p.h"

#include <QDir>

#include <cerrno>
#include <utility>

#include <unistd.h>

namespace replhost::sdk {

using namespace workerprocess;

bool WorkerProcess::Private::readStream(int index)
{
    Output &o = out[index];
    if (o.fd < 0)
        return true;
    if (o.reading) {
        if (o.notifier && o.notifier->isEnabled()) {
            o.notifier->setEnabled(false);
            o.deferred = true;
        }
        return true;
    }
    o.reading = true;
    ++readDepth;
    StreamSink sink(this, index);
    for (int n = 0; n < kMaxReadsPerWakeup; ++n) {
        // A run's `started` is in fd 4 before any byte the run writes, so after reading output
        // while a run waits for its `started`, fd 4 is read first: otherwise the run's first
        // bytes would pass for background output. Under a read of fd 4 that cannot be done, so
        // the bytes stay in the pipe until the notifier brings us back.
        if (exec && !exec->started && readingEvents)
            break;
        const ssize_t got = ::read(o.fd, o.buffer.get(), size_t(kReadChunk));
        if (got > 0) {
            ++o.reads;
            o.lastReadShort = got < kReadChunk;
            if (exec && !exec->started && !readEvents())
                return false;
            if (!o.scanner.feed(o.buffer.get(), got, sink))
                return false;
            // Every byte of the read is now in o.chunk, which is delivered next with nothing in
            // between that could release an event.
            o.delivered = o.reads;
            if (!deliverText(index, std::exchange(o.chunk, QString())))
                return false;
            // An event without a mark that came in while these bytes were in hand waited only
            // for them: release it before reading on, so that it does not wait for later bytes.
            if (!queue.empty() && queue.front().bound.barrier == Barrier::Position
                && !releaseReady(false))
                return false;
            if (got < kReadChunk)
                break; // a short read from a pipe means it was empty: save the EAGAIN round trip
            continue;
        }
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && errno == EAGAIN)
            o.lastReadShort = true;
        if (got == 0 || errno != EAGAIN) {
            o.eof = true;
            if (o.notifier)
                o.notifier->setEnabled(false);
        }
        break;
    }
    o.reading = false;
    --readDepth;
    if (o.deferred) {
        o.deferred = false;
        if (o.notifier && !o.eof)
            o.notifier->setEnabled(true);
    }
    return finishReads();
}

bool WorkerProcess::Private::StreamSink::text(const char *data, qsizetype size)
{
    Output &o = m_d->out[m_index];
    o.chunk += o.decoder.decode(QByteArrayView(data, size));
    return true;
}

bool WorkerProcess::Private::StreamSink::mark(quint64 seq)
{
    return m_d->handleMark(m_index, seq);
}

QString WorkerProcess::Private::ownerOf(int index) const
{
    // Output belongs to a run from its `started` until its final mark; the rest is background
    // (timers, servers, jobs a run left behind) and must not be pinned on any run.
    if (!exec || !exec->started)
        return {};
    if (exec->doneReceived
        && (exec->doneMarked ? out[index].seq >= exec->doneMark
                             : out[index].reads > exec->doneReads[index]))
        return {};
    return exec->id;
}

bool WorkerProcess::Private::deliverText(int index, QString text)
{
    if (text.isEmpty())
        return true;
    Output &o = out[index];
    if (index == 1)
        appendStderr(text);
    QString owner = ownerOf(index);
    // Text read after a mark whose event is still waiting (for the other stream) was written
    // after that event: it waits too, so order is kept per stream. Text read while an event
    // without a mark waits is placed by when it was read, so it waits as well.
    bool hold = !o.held.empty() || o.seq > highestEventMark;
    if (!hold && !queue.empty()) {
        const Bound &head = queue.front().bound;
        hold = head.barrier != Barrier::Mark || head.mark <= o.seq;
    }
    if (hold) {
        heldChars += text.size();
        Held *last = o.held.empty() ? nullptr : &o.held.back();
        // Merged texts take the later read count, which must not carry earlier text past an
        // event placed between the two reads.
        if (last && last->afterMark == o.seq && last->owner == owner
            && (last->read == o.reads || !positionQueued())) {
            last->text += text;
            last->read = o.reads;
        } else {
            o.held.push_back({o.seq, o.reads, std::move(owner), std::move(text)});
        }
        if (heldChars > kMaxHeldChars) {
            stopAwaitingEvents();
            return releaseReady(true);
        }
        if (o.seq > highestEventMark && awaitedEventDeadline < 0) {
            awaitedEventDeadline = clock.elapsed() + std::max(0, spec.syncGraceMs);
            armSyncTimer();
        }
        return true;
    }
    return emitEvent(Event::stream(owner, o.name, text));
}

bool WorkerProcess::Private::handleMark(int index, quint64 seq)
{
    Output &o = out[index];
    if (!deliverText(index, std::exchange(o.chunk, QString())))
        return false;
    o.seq = std::max(o.seq, seq);
    // The driver writes the event right after its mark; learn it now, so that the text after
    // the mark is attributed and ordered correctly.
    if (seq > highestEventMark && !readingEvents && !readEvents())
        return false;
    return releaseReady(false);
}

bool WorkerProcess::Private::enqueue(Event event, Barrier barrier, quint64 mark,
                                     std::optional<DoneFrame> doneFrame)
{
    Pending pending{std::move(event), {}, clock.elapsed() + std::max(0, spec.syncGraceMs),
                    std::move(doneFrame)};
    Bound &bound = pending.bound;
    bound.barrier = barrier;
    if (barrier == Barrier::Mark) {
        bound.mark = mark;
        highestEventMark = std::max(highestEventMark, mark);
        if (!markAheadOfEvents())
            awaitedEventDeadline = -1;
    } else if (barrier == Barrier::Position) {
        // A done ends the run: its driver wrote every event of the run before it, so a mark
        // still without its event will not get one, and the text after it belongs before done.
        if (pending.event.kind == Event::Kind::Done)
            stopAwaitingEvents();
        bound.mark = highestEventMark;
        for (int i = 0; i < 2; ++i)
            bound.reads[i] = out[i].reads;
    }
    queue.push_back(std::move(pending));
    if (!releaseReady(false))
        return false;
    if (queue.empty())
        return true;
    // The driver wrote the marks before the event, so they are in the pipes already (unless the
    // driver is broken): read them now instead of waiting for the notifiers' turn.
    for (int i = 0; i < 2 && !queue.empty(); ++i) {
        const Bound &head = queue.front().bound;
        if (head.barrier == Barrier::Mark && out[i].seq < head.mark && !readStream(i))
            return false;
    }
    if (!queue.empty())
        armSyncTimer();
    return true;
}

bool WorkerProcess::Private::precedes(const Held &h, int index, const Bound &before)
{
    switch (before.barrier) {
    case Barrier::Mark:
        return h.afterMark < before.mark;
    case Barrier::Position:
        return h.afterMark <= before.mark && h.read <= before.reads[index];
    case Barrier::None:
        break;
    }
    return false;
}

bool WorkerProcess::Private::isReady(const Bound &bound) const
{
    switch (bound.barrier) {
    case Barrier::Mark:
        return out[0].seq >= bound.mark && out[1].seq >= bound.mark;
    case Barrier::Position:
        return out[0].delivered >= bound.reads[0] && out[1].delivered >= bound.reads[1];
    case Barrier::None:
        break;
    }
    return true;
}

bool WorkerProcess::Private::takeTrailingText(const Bound &before)
{
    for (int i = 0; i < 2; ++i) {
        Output &o = out[i];
        // Bytes the scanner holds back as a possible mark cannot be the start of one when the
        // pipe was empty after them (a mark is written whole, in one write()): they are text,
        // written before the event. Only while nothing has been read since the event came (the
        // scanner's state is then that of the bytes before it) and no read is being handled.
        if (o.reading || o.reads != before.reads[i] || !o.lastReadShort
            || !o.scanner.holdsPartialMark())
            continue;
        StreamSink sink(this, i);
        if (!o.scanner.flush(sink) || !deliverText(i, std::exchange(o.chunk, QString())))
            return false;
    }
    return true;
}

bool WorkerProcess::Private::positionQueued() const
{
    for (const Pending &p : queue) {
        if (p.bound.barrier == Barrier::Position)
            return true;
    }
    return false;
}

bool WorkerProcess::Private::flushHeld(const Bound *before)
{
    for (int i = 0; i < 2; ++i) {
        Output &o = out[i];
        while (!o.held.empty() && (!before || precedes(o.held.front(), i, *before))) {
            Held h = std::move(o.held.front());
            o.held.pop_front();
            heldChars -= h.text.size();
            if (!emitEvent(Event::stream(h.owner, o.name, h.text)))
                return false;
        }
    }
    return true;
}

bool WorkerProcess::Private::releaseReady(bool forceHead)
{
    // One release loop at a time; a nested call (from a slot running a nested event loop) leaves
    // the work to the loop already on the stack, which re-reads the queue after every emit.
    if (releasing)
        return true;
    releasing = true;
    while (!queue.empty()) {
        // A copy: the emits below run slots, which may change the queue.
        const Bound bound = queue.front().bound;
        const bool ready = isReady(bound);
        if (!ready && !forceHead)
            break;
        forceHead = false;
        if (bound.barrier == Barrier::Position && !takeTrailingText(bound))
            return false;
        if (!flushHeld(&bound))
            return false;
        if (queue.empty())
            break;
        Pending p = std::move(queue.front());
        queue.pop_front();
        if (!release(std::move(p.event), ready && bound.barrier != Barrier::None,
                     std::move(p.doneFrame)))
            return false;
    }
    releasing = false;
    if (queue.empty()) {
        if (!markAheadOfEvents()) {
            syncTimer.stop();
            return flushHeld(nullptr);
        }
        // Text after a mark whose event has not come yet waits for it.
        Bound known;
        known.barrier = Barrier::Mark;
        known.mark = highestEventMark + 1;
        return flushHeld(&known);
    }
    const Bound head = queue.front().bound;
    return flushHeld(&head);
}

void WorkerProcess::Private::stopAwaitingEvents()
{
    highestEventMark = std::max({highestEventMark, out[0].seq, out[1].seq});
    awaitedEventDeadline = -1;
}

bool WorkerProcess::Private::release(Event event, bool synced,
                                     std::optional<DoneFrame> doneFrame)
{
    if (event.kind != Event::Kind::Done)
        return emitEvent(event);
    if (doneFrame) {
        event.fields = doneFrame->takeFields(synced, &recentDone);
    } else {
        event.fields.insert(QStringLiteral("streams_synced"), synced);
        event.fields.insert(QStringLiteral("state_lost"), false);
    }
    if (view) {
        const QJsonValue cwd = event.fields.value(QLatin1String("cwd"));
        if (cwd.isString() && QDir::isAbsolutePath(cwd.toString()))
            event.fields.insert(QStringLiteral("cwd"),
                                hostPathOf(*view, QDir::cleanPath(cwd.toString())));
    }
    if (!emitOwedStarted())
        return false;
    // fork() failing with EAGAIN is the program's own error to report; this says which limit
    // made it fail, which the program cannot know.
    if (const qint64 refused = limits.takeProcessLimitHits(); refused > 0
        && !emitEvent(Event::stream(event.executionId, QStringLiteral("stderr"),
                                    limits.processLimitNote(refused))))
        return false;
    // The run is over before anyone hears of it, so a slot may start the next one right away.
    exec.reset();
    interrupts.stop();
    const bool becameIdle =
        !ended && (state == State::Busy || state == State::Interrupting);
    if (becameIdle)
        state = State::Idle;
    if (!emitEvent(event))
        return false;
    if (becameIdle && state == State::Idle)
        return setState(State::Idle);
    return true;
}

void WorkerProcess::Private::armSyncTimer()
{
    if (syncTimer.isActive())
        return;
    qint64 deadline = queue.empty() ? -1 : queue.front().deadline;
    if (awaitedEventDeadline >= 0 && (deadline < 0 || awaitedEventDeadline < deadline))
        deadline = awaitedEventDeadline;
    if (deadline >= 0)
        syncTimer.start(int(std::max<qint64>(0, deadline - clock.elapsed())));
}

void WorkerProcess::Private::onSyncTimeout()
{
    // A mark did not arrive in time (a driver that forgot it, output redirected beyond reach):
    // let the event go rather than hold the run forever. Done says streams_synced: false.
    const qint64 now = clock.elapsed();
    while (!queue.empty() && queue.front().deadline <= now) {
        qCDebug(lcWorker) << "sync mark" << queue.front().bound.mark << "missing; releasing"
                          << queue.front().event.type;
        if (!releaseReady(true))
            return;
    }
    if (awaitedEventDeadline >= 0 && awaitedEventDeadline <= now) {
        qCDebug(lcWorker) << "no event for sync mark" << std::max(out[0].seq, out[1].seq)
                          << "; releasing the output after it";
        stopAwaitingEvents();
        if (!releaseReady(false))
            return;
    }
    armSyncTimer();
}

} // namespace replhost::sdk
