// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QJsonValue>
#include <QObject>
#include <QThreadPool>

#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace replhost::http {

// Runs file-system calls off the engine thread and hands their results back to it. Code in a
// workspace can make a file system slow or strange (a FIFO, a 10 GB file, a hung network mount):
// the engine thread, which answers every client, never waits on one; at most a few of these
// threads do, and only file requests queue behind them.
//
// run(work, done): `work()` runs on a pool thread and must not touch the engine or an exchange
// (it gets values: a WorkspaceFiles, paths, a descriptor); `done(result)` then runs on the
// thread that created this object. `done` is destroyed on that thread too, so it may own an
// exchange.
//
// Ownership: the pool is owned here; the destructor waits for calls that are running (their
// `done` is not called then). Threading: run() from the creating thread.
// What a file route answers after its work: a status and a JSON body (null: no body).
struct FileReply {
    int status = 200;
    QJsonValue body = QJsonValue::Null;
};

class FileWork {
public:
    static constexpr int kThreads = 4;

    FileWork();
    ~FileWork();
    FileWork(const FileWork &) = delete;
    FileWork &operator=(const FileWork &) = delete;

    template <typename Work, typename Done>
    void run(Work work, Done done)
    {
        using Value = std::invoke_result_t<Work &>;
        struct Answer {
            Done done;
            std::optional<Value> value;
        };
        // Owned by the queued call alone, so the last reference to whatever `done` holds is
        // dropped on the receiving thread, never on the pool's.
        auto *answer = new Answer{std::move(done), std::nullopt};
        QObject *receiver = m_receiver.get();
        m_pool.start([work = std::move(work), answer, receiver]() mutable {
            answer->value.emplace(work());
            QMetaObject::invokeMethod(receiver, [answer]() {
                std::unique_ptr<Answer> owned(answer);
                owned->done(std::move(*owned->value));
            }, Qt::QueuedConnection);
        });
    }

private:
    std::unique_ptr<QObject> m_receiver;
    QThreadPool m_pool;
};

} // namespace replhost::http
