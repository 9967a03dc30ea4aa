// SPDX-License-Identifier: Apache-2.0
//
// replhost-server over HTTP on loopback, with the in-process engine as the baseline of the same
// run:
//   roundtrip/engine/<placement>  ContextManager::run() of `x = 1` on a warm Python context of an
//                                 engine opened in this process, until its Execution finishes
//   roundtrip/http/<placement>    the same run as POST /v1/contexts/{id}/executions?wait=true on
//                                 one keep-alive connection to a real replhost-server
//   roundtrip/mcp/<placement>     the same run as an MCP tools/call of run_code, POST /mcp on one
//                                 keep-alive connection to the same server (a JSON answer)
//   roundtrip/tcp_echo/same_cpu   the same request bytes to a peer that answers each with an
//                                 answer of the same size without reading it: the transport alone
//   roundtrip/healthz/same_cpu    GET /healthz on one keep-alive connection to the same server:
//                                 the HTTP layer (framing, gate, routing, a small JSON answer)
//                                 without a run
//   throughput/http               16 keep-alive clients over 8 Python contexts, `x = 1` in a loop
//                                 (one epoll loop drives all 16 connections)
//   stream/http                   one run that writes 200 MiB to stdout, read as Server-Sent
//                                 Events, with the server's resident memory sampled meanwhile
// After the table, main() prints the figures the design's targets are stated in: HTTP within 2x
// of in-process, MCP within 1.5x of the native ?wait=true round trip, >= 10,000 executions/s, >= 100 MB/s of output with < 64 MiB of server growth.
//
// Placement (a wake-up across CPUs costs about 20 µs on the reference VM): the round trips run
// everything on CPU0 (same_cpu) or move only the worker to CPU1 (cross_cpu); throughput and
// streaming let the scheduler use both CPUs for every process.
//
// Environment: REPLHOST_BENCH_PYTHON picks the interpreter (default /usr/bin/python3), for the
// in-process engine and the server alike.

#include "cpuplacement.h"
#include "figurereporter.h"
#include "httpresponsereader.h"
#include "keepaliveconnection.h"
#include "latencysamples.h"
#include "schedmeter.h"
#include "serverprocess.h"
#include "tcpechopeer.h"
#include "warmenginecontext.h"

#include "core/engine.h"
#include "core/execution.h"

#include <benchmark/benchmark.h>

#include <QCoreApplication>
#include <QDir>
#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>

#include <sys/epoll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace replhost;
using namespace replhost::bench;
using Clock = std::chrono::steady_clock;

constexpr int kHostCpu = 0;
constexpr int kOtherCpu = 1;
const std::vector<int> kBothCpus{0, 1};
const QString kCode = QStringLiteral("x = 1");

// Fixed counts, as in bench_roundtrip: enough samples for a p99 and a predictable run time.
constexpr int kRoundTrips = 20000;
constexpr int kWarmups = 1000;
constexpr int kClients = 16;
constexpr int kContexts = 8;
constexpr int kThroughputRuns = 60000;
constexpr int kThroughputWarmups = 4000;
constexpr qint64 kMiB = 1024 * 1024;
constexpr qint64 kStreamMiB = 200;
// The per-execution output cap of the server under test: above the streamed output, so nothing
// is dropped (the default, 16 MiB, would cut the stream short after 16 MiB).
const QString kServerMaxOutput = QStringLiteral("256M");
constexpr int kRssSampleMs = 5;

// Writes 200 blocks of 1 MiB (lines of 1,023 'x' and a newline) through the raw stdout buffer.
const char *const kStreamCode = "import sys\n"
                                "block = (b'x' * 1023 + b'\\n') * 1024\n"
                                "out = sys.stdout.buffer\n"
                                "for _ in range(%1):\n"
                                "    out.write(block)\n"
                                "out.flush()\n";

enum class Placement { SameCpu, CrossCpu };

const char *placementSuffix(Placement placement)
{
    return placement == Placement::SameCpu ? "same_cpu" : "cross_cpu";
}

int workerCpu(Placement placement)
{
    return placement == Placement::SameCpu ? kHostCpu : kOtherCpu;
}

std::string caseName(const char *what, Placement placement)
{
    return std::string("roundtrip/") + what + "/" + placementSuffix(placement);
}

std::string json(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact).toStdString();
}

QJsonObject parseObject(const std::string &body)
{
    return QJsonDocument::fromJson(QByteArray::fromStdString(body)).object();
}

// Everything the cases share, created in main(): the in-process engine and the server process,
// each with a temporary data directory of its own.
struct Fixtures {
    QString python;

    QTemporaryDir engineDir;
    WarmEngineContext engine;  // its context is created on first use

    ServerProcess server;
    std::string serverError;
    std::string httpContext;
    pid_t httpWorker = 0;
    // The HTTP case's request and its last answer's body, which the transport's floor repeats.
    std::string httpRequest;
    std::string httpAnswerBody;
};

Fixtures *g_fixtures = nullptr;

// ---- the server's side ---------------------------------------------------------------------

// One request on `connection` that must answer `expectStatus`; the reader keeps the answer.
std::optional<std::string> call(KeepAliveConnection &connection, HttpResponseReader &reader,
                                const std::string &method, const std::string &target,
                                const std::string &body, int expectStatus)
{
    ServerProcess &server = g_fixtures->server;
    const std::string request = KeepAliveConnection::request(method, target, server.port(),
                                                             server.token().toStdString(), body);
    if (!connection.roundTrip(request, reader))
        return method + " " + target + ": " + connection.error();
    if (reader.status() != expectStatus)
        return method + " " + target + " answered " + std::to_string(reader.status()) + ": "
                + reader.body();
    return std::nullopt;
}

// A Python context on the server, started and idle; `pid` is its worker.
std::optional<std::string> createHttpContext(KeepAliveConnection &connection, std::string *id,
                                             pid_t *pid)
{
    HttpResponseReader reader;
    if (auto error = call(connection, reader, "POST", "/v1/contexts",
                          json({{QStringLiteral("language"), QStringLiteral("python")}}), 201))
        return error;
    *id = parseObject(reader.body()).value(QStringLiteral("id")).toString().toStdString();
    // The first run waits for the interpreter to start.
    if (auto error = call(connection, reader, "POST", "/v1/contexts/" + *id + "/executions?wait=true",
                          json({{QStringLiteral("code"), QStringLiteral("x = 0")}}), 200))
        return error;
    if (auto error = call(connection, reader, "GET", "/v1/contexts/" + *id, {}, 200))
        return error;
    *pid = pid_t(parseObject(reader.body()).value(QStringLiteral("pid")).toInteger());
    if (*pid <= 0)
        return std::string("the context reports no worker pid: ") + reader.body();
    return std::nullopt;
}

std::optional<std::string> ensureServer()
{
    Fixtures &f = *g_fixtures;
    if (!f.serverError.empty())
        return f.serverError;
    if (f.server.isRunning())
        return std::nullopt;
    if (!f.server.start({QStringLiteral("--max-output"), kServerMaxOutput},
                        {{QStringLiteral("REPLHOST_PYTHON"), f.python}})) {
        f.serverError = f.server.error().toStdString();
        return f.serverError;
    }
    return std::nullopt;
}

std::optional<std::string> ensureHttpContext(KeepAliveConnection &connection)
{
    Fixtures &f = *g_fixtures;
    if (!f.httpContext.empty())
        return std::nullopt;
    return createHttpContext(connection, &f.httpContext, &f.httpWorker);
}

// One timed round trip per iteration; `check`, untimed, sees each answer. False when the
// connection failed (its error() says why).
bool timeRoundTrips(benchmark::State &state, KeepAliveConnection &connection,
                    const std::string &request, HttpResponseReader &reader,
                    LatencySamples &samples, const std::function<void()> &check = {})
{
    for (auto _ : state) {
        const auto start = Clock::now();
        const bool connected = connection.roundTrip(request, reader);
        samples.add(Clock::now() - start);
        if (!connected)
            return false;
        if (check)
            check();
    }
    return true;
}

// The server started and `connection` open to it; otherwise false, the case skipped saying why.
bool connectToServer(benchmark::State &state, KeepAliveConnection &connection)
{
    if (auto error = ensureServer()) {
        state.SkipWithError(error->c_str());
        return false;
    }
    if (!connection.open(g_fixtures->server.port())) {
        state.SkipWithError(connection.error().c_str());
        return false;
    }
    return true;
}

// kWarmups round trips of `request`, each answered 200; otherwise false, the case skipped.
bool warmUp(benchmark::State &state, KeepAliveConnection &connection, const std::string &request,
            HttpResponseReader &reader)
{
    for (int i = 0; i < kWarmups; ++i) {
        if (!connection.roundTrip(request, reader) || reader.status() != 200) {
            state.SkipWithError(("warm-up: " + connection.error() + reader.body()).c_str());
            return false;
        }
    }
    return true;
}

// ---- the cases ------------------------------------------------------------------------------

void BM_EngineRoundTrip(benchmark::State &state, Placement placement)
{
    WarmEngineContext &engine = g_fixtures->engine;
    if (auto error = engine.ensureStarted()) {
        state.SkipWithError(error->c_str());
        return;
    }
    if (pinProcessTree(engine.workerPid(), workerCpu(placement)) == 0) {
        state.SkipWithError("cannot pin the worker (sched_setaffinity)");
        return;
    }
    state.SetLabel(placement == Placement::SameCpu ? "host+worker CPU0" : "host CPU0, worker CPU1");
    engine.measure(state, kCode, kWarmups);
}

// Round trips of `request` (built once the warm context exists) on one keep-alive connection
// to the server, its worker placed as `placement` says; `answered` says whether an answer is
// the one expected. The last answer is left in `reader`.
void measureRunRoundTrips(benchmark::State &state, Placement placement,
                          const std::function<std::string()> &makeRequest,
                          const std::function<bool(const HttpResponseReader &)> &answered,
                          HttpResponseReader &reader, std::string *sent)
{
    Fixtures &f = *g_fixtures;
    KeepAliveConnection connection;
    if (!connectToServer(state, connection))
        return;
    if (auto error = ensureHttpContext(connection)) {
        state.SkipWithError(error->c_str());
        return;
    }
    // The server and all its threads stay on CPU0 with this process; only the worker moves.
    if (pinProcessTree(pid_t(f.server.pid()), kHostCpu) == 0
        || pinProcessTree(f.httpWorker, workerCpu(placement)) == 0) {
        state.SkipWithError("cannot pin the server or its worker (sched_setaffinity)");
        return;
    }
    state.SetLabel(placement == Placement::SameCpu ? "client+server+worker CPU0"
                                                   : "client+server CPU0, worker CPU1");
    const std::string request = makeRequest();
    if (!warmUp(state, connection, request, reader))
        return;

    LatencySamples samples(state.max_iterations);
    int failed = 0;
    SchedMeter sched({{"server", pid_t(f.server.pid()), false, true}, {"worker", f.httpWorker}});
    const bool connected = timeRoundTrips(state, connection, request, reader, samples,
                                          [&] { failed += !answered(reader); });
    sched.report(state);
    *sent = request;
    if (!connected)
        state.SkipWithError(connection.error().c_str());
    else if (failed)
        state.SkipWithError((std::to_string(failed) + " runs did not answer 200 with status \"ok\"").c_str());
    samples.report(state);
}

void BM_HttpRoundTrip(benchmark::State &state, Placement placement)
{
    Fixtures &f = *g_fixtures;
    HttpResponseReader reader;
    measureRunRoundTrips(state, placement, [&] {
        return KeepAliveConnection::request(
                "POST", "/v1/contexts/" + f.httpContext + "/executions?wait=true", f.server.port(),
                f.server.token().toStdString(), json({{QStringLiteral("code"), kCode}}));
    }, [](const HttpResponseReader &answer) {
        // The body is a few hundred bytes; finding the status costs well under a microsecond.
        return answer.status() == 200 && answer.body().find("\"status\":\"ok\"") != std::string::npos;
    }, reader, &f.httpRequest);
    f.httpAnswerBody = reader.body();
}

// The same run as an agent makes it: MCP's tools/call of run_code on the same warm context,
// answered as one JSON-RPC response (no progress asked for, so no event stream), on one
// keep-alive connection. Without a session: a request in none speaks 2025-03-26.
void BM_McpRoundTrip(benchmark::State &state, Placement placement)
{
    Fixtures &f = *g_fixtures;
    HttpResponseReader reader;
    std::string sent;
    measureRunRoundTrips(state, placement, [&] {
        const QJsonObject call{
                {QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                {QStringLiteral("id"), 1},
                {QStringLiteral("method"), QStringLiteral("tools/call")},
                {QStringLiteral("params"),
                 QJsonObject{{QStringLiteral("name"), QStringLiteral("run_code")},
                             {QStringLiteral("arguments"),
                              QJsonObject{{QStringLiteral("context_id"), QString::fromStdString(f.httpContext)},
                                          {QStringLiteral("code"), kCode}}}}}};
        return KeepAliveConnection::request("POST", "/mcp", f.server.port(), f.server.token().toStdString(),
                                            json(call));
    }, [](const HttpResponseReader &answer) {
        return answer.status() == 200 && answer.body().find("\"status\":\"ok\"") != std::string::npos;
    }, reader, &sent);
}

// The server's HTTP layer without a run: the request is framed, passes the Host check, is
// routed and answered with a small JSON document, on one keep-alive connection; nothing reaches
// the engine. Next to tcp_echo and the engine it splits what the HTTP round trip adds.
void BM_HealthzRoundTrip(benchmark::State &state)
{
    Fixtures &f = *g_fixtures;
    KeepAliveConnection connection;
    if (!connectToServer(state, connection))
        return;
    if (pinProcessTree(pid_t(f.server.pid()), kHostCpu) == 0) {
        state.SkipWithError("cannot pin the server (sched_setaffinity)");
        return;
    }
    state.SetLabel("client+server CPU0");
    const std::string request = KeepAliveConnection::request("GET", "/healthz", f.server.port(),
                                                             f.server.token().toStdString(), {});
    HttpResponseReader reader;
    if (!warmUp(state, connection, request, reader))
        return;
    LatencySamples samples(state.max_iterations);
    int failed = 0;
    SchedMeter sched({{"server", pid_t(f.server.pid()), false, true}});
    const bool connected = timeRoundTrips(state, connection, request, reader, samples,
                                          [&] { failed += reader.status() != 200; });
    sched.report(state);
    if (!connected)
        state.SkipWithError(connection.error().c_str());
    else if (failed)
        state.SkipWithError((std::to_string(failed) + " requests did not answer 200").c_str());
    samples.report(state);
}

// The HTTP case's transport without a server behind it: the same request bytes, and an answer
// with the head fields the server sends and a body of the same size, from a peer that neither
// parses nor runs anything. Runs after the HTTP case, whose bytes it takes; alone, it uses a
// request and a body of typical sizes.
void BM_TcpEchoRoundTrip(benchmark::State &state)
{
    Fixtures &f = *g_fixtures;
    const std::string request = !f.httpRequest.empty()
            ? f.httpRequest
            : KeepAliveConnection::request("POST", "/v1/contexts/" + std::string(36, 'c')
                                                   + "/executions?wait=true",
                                           40000, std::string(43, 't'),
                                           json({{QStringLiteral("code"), kCode}}));
    const std::string body = !f.httpAnswerBody.empty() ? f.httpAnswerBody : std::string(700, ' ');
    const std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                               "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    TcpEchoPeer peer;
    KeepAliveConnection connection;
    if (!peer.start(request.size(), answer)) {
        state.SkipWithError(peer.error().c_str());
        return;
    }
    if (!connection.open(peer.port())) {
        state.SkipWithError(connection.error().c_str());
        return;
    }
    state.SetLabel("client+peer CPU0");
    HttpResponseReader reader;
    for (int i = 0; i < kWarmups; ++i) {
        if (!connection.roundTrip(request, reader)) {
            state.SkipWithError(connection.error().c_str());
            return;
        }
    }
    LatencySamples samples(state.max_iterations);
    SchedMeter sched({{"peer", peer.pid()}});
    const bool connected = timeRoundTrips(state, connection, request, reader, samples);
    sched.report(state);
    if (!connected)
        state.SkipWithError(connection.error().c_str());
    samples.report(state);
}

// For the cases that let the scheduler use both CPUs: the server's whole tree (its workers, and
// those it starts later, included) and this thread, until the scope ends; then this thread goes
// back to CPU0.
class BothCpus {
public:
    explicit BothCpus(pid_t server)
    {
        pinProcessTree(server, kBothCpus);
        pinThread(0, kBothCpus);
    }
    ~BothCpus() { pinThread(0, kHostCpu); }
    BothCpus(const BothCpus &) = delete;
    BothCpus &operator=(const BothCpus &) = delete;
};

// `runs` executions over `connections` (connection i runs in context i % contexts), each
// connection sending its next request when its answer is complete. Returns the wall time.
struct LoadResult {
    double seconds = 0;
    int failed = 0;
    std::string error;
};

LoadResult driveLoad(std::vector<std::unique_ptr<KeepAliveConnection>> &connections,
                     const std::vector<std::string> &requests, int runs, LatencySamples *samples)
{
    LoadResult result;
    const int epoll = epoll_create1(EPOLL_CLOEXEC);
    std::vector<HttpResponseReader> readers(connections.size());
    std::vector<Clock::time_point> sent(connections.size());
    int issued = 0, completed = 0;
    auto issue = [&](size_t i) {
        readers[i].reset();
        sent[i] = Clock::now();
        ++issued;
        return connections[i]->send(requests[i % requests.size()]);
    };
    const auto start = Clock::now();
    for (size_t i = 0; i < connections.size() && issued < runs; ++i) {
        epoll_event event{};
        event.events = EPOLLIN;
        event.data.u64 = i;
        epoll_ctl(epoll, EPOLL_CTL_ADD, connections[i]->fd(), &event);
        if (!issue(i))
            result.error = connections[i]->error();
    }
    epoll_event events[kClients];
    while (completed < runs && result.error.empty()) {
        const int n = epoll_wait(epoll, events, kClients, 60000);
        if (n <= 0) {
            result.error = n == 0 ? "no answer within 60 s" : std::string("epoll_wait: ") + std::strerror(errno);
            break;
        }
        for (int e = 0; e < n; ++e) {
            const size_t i = size_t(events[e].data.u64);
            if (!connections[i]->receiveAvailable(readers[i])) {
                result.error = connections[i]->error();
                break;
            }
            if (!readers[i].isComplete())
                continue;
            if (samples)
                samples->add(Clock::now() - sent[i]);
            ++completed;
            result.failed += readers[i].status() != 200
                    || readers[i].body().find("\"status\":\"ok\"") == std::string::npos;
            if (issued < runs && !issue(i))
                result.error = connections[i]->error();
        }
    }
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    close(epoll);
    return result;
}

void BM_HttpThroughput(benchmark::State &state)
{
    Fixtures &f = *g_fixtures;
    if (auto error = ensureServer()) {
        state.SkipWithError(error->c_str());
        return;
    }
    const BothCpus placement(pid_t(f.server.pid()));  // the contexts' workers included
    state.SetLabel(std::to_string(kClients) + " clients x " + std::to_string(kContexts)
                   + " contexts, all on CPU0+CPU1");

    KeepAliveConnection setup;
    if (!setup.open(f.server.port())) {
        state.SkipWithError(setup.error().c_str());
            return;
    }
    std::vector<std::string> requests;
    std::vector<pid_t> workers;
    for (int c = 0; c < kContexts; ++c) {
        std::string id;
        pid_t pid = 0;
        if (auto error = createHttpContext(setup, &id, &pid)) {
            state.SkipWithError(error->c_str());
            return;
        }
        workers.push_back(pid);
        requests.push_back(KeepAliveConnection::request(
                "POST", "/v1/contexts/" + id + "/executions?wait=true", f.server.port(),
                f.server.token().toStdString(), json({{QStringLiteral("code"), kCode}})));
    }
    std::vector<std::unique_ptr<KeepAliveConnection>> connections;
    for (int i = 0; i < kClients; ++i) {
        auto connection = std::make_unique<KeepAliveConnection>();
        if (!connection->open(f.server.port()) || !connection->setNonBlocking(true)) {
            state.SkipWithError(connection->error().c_str());
            return;
        }
        connections.push_back(std::move(connection));
    }

    const LoadResult warm = driveLoad(connections, requests, kThroughputWarmups, nullptr);
    if (!warm.error.empty()) {
        state.SkipWithError(("warm-up: " + warm.error).c_str());
            return;
    }
    const qint64 rssBefore = f.server.residentKiB();
    LatencySamples samples(kThroughputRuns);
    LoadResult load;
    {
        std::vector<SchedMeter::Watched> watched{{"server", pid_t(f.server.pid()), false, true}};
        SchedMeter sched(std::move(watched));
        for (auto _ : state) {
            load = driveLoad(connections, requests, kThroughputRuns, &samples);
            state.SetIterationTime(load.seconds);
        }
        sched.report(state);
    }
    const qint64 rssAfter = f.server.residentKiB();
    if (!load.error.empty()) {
        state.SkipWithError(load.error.c_str());
        return;
    }
    if (load.failed)
        state.SkipWithError((std::to_string(load.failed) + " runs failed").c_str());
    samples.report(state);
    // Per execution rather than per iteration (one iteration is the whole load).
    const double runs = double(kThroughputRuns);
    state.counters["host_cpu_us"] = double(state.counters["host_cpu_us"]) / runs;
    state.counters["server_cpu_us"] = double(state.counters["server_cpu_us"]) / runs;
    state.counters.erase("host_runs");
    state.counters.erase("server_runs");
    state.counters["exec_per_s"] = runs / load.seconds;
    state.counters["rss_before_mib"] = double(rssBefore) / 1024.0;
    state.counters["rss_after_mib"] = double(rssAfter) / 1024.0;
}

// Samples a process's resident memory until stopped, keeping the peak.
class RssSampler {
public:
    explicit RssSampler(const ServerProcess &server)
        : m_thread([this, &server] {
              while (!m_stop.load()) {
                  const qint64 kib = server.residentKiB();
                  if (kib > m_peakKiB.load())
                      m_peakKiB.store(kib);
                  std::this_thread::sleep_for(std::chrono::milliseconds(kRssSampleMs));
              }
          })
    {
    }
    ~RssSampler() { stop(); }

    qint64 stop()
    {
        m_stop.store(true);
        if (m_thread.joinable())
            m_thread.join();
        return m_peakKiB.load();
    }

private:
    std::atomic<bool> m_stop{false};
    std::atomic<qint64> m_peakKiB{0};
    std::thread m_thread;
};

void BM_HttpStream(benchmark::State &state)
{
    Fixtures &f = *g_fixtures;
    if (auto error = ensureServer()) {
        state.SkipWithError(error->c_str());
        return;
    }
    const BothCpus placement(pid_t(f.server.pid()));
    state.SetLabel(std::to_string(kStreamMiB) + " MiB of stdout as SSE, all on CPU0+CPU1");
    KeepAliveConnection connection;
    std::string context;
    pid_t worker = 0;
    std::optional<std::string> error;
    if (!connection.open(f.server.port()))
        error = connection.error();
    else
        error = createHttpContext(connection, &context, &worker);
    if (error) {
        state.SkipWithError(error->c_str());
            return;
    }

    const std::string request = KeepAliveConnection::request(
            "POST", "/v1/contexts/" + context + "/executions", f.server.port(),
            f.server.token().toStdString(),
            json({{QStringLiteral("code"), QString::fromLatin1(kStreamCode).arg(kStreamMiB)}}));
    // The SSE client's own work: count events (blank lines) and keep the stream's tail, where
    // the "done" event is. memchr over the bytes is the cheapest honest reading of the stream.
    constexpr size_t kTail = 4096;
    size_t events = 0;
    bool lastWasNewline = false;
    std::string tail;
    HttpResponseReader reader;
    reader.setBodySink([&](const char *data, size_t size) {
        if (size == 0)
            return;
        const char *end = data + size;
        for (const char *at = data;
             at < end && (at = static_cast<const char *>(std::memchr(at, '\n', size_t(end - at))));
             ++at) {
            // A newline right after a newline ends a message (a chunk may split the two).
            events += at == data ? lastWasNewline : at[-1] == '\n';
        }
        lastWasNewline = end[-1] == '\n';
        if (size >= kTail) {
            tail.assign(end - kTail, kTail);
        } else {
            tail.append(data, size);
            if (tail.size() > 2 * kTail)
                tail.erase(0, tail.size() - kTail);
        }
    });

    qint64 rssBefore = 0, rssPeak = 0;
    double seconds = 0;
    bool ok = true;
    for (auto _ : state) {
        events = 0;
        tail.clear();
        rssBefore = f.server.residentKiB();
        RssSampler sampler(f.server);
        const auto start = Clock::now();
        reader.reset();
        ok = connection.send(request) && connection.receive(reader);
        seconds = std::chrono::duration<double>(Clock::now() - start).count();
        rssPeak = sampler.stop();
        state.SetIterationTime(seconds);
        if (!ok)
            break;
    }
    if (!ok) {
        state.SkipWithError(connection.error().c_str());
        return;
    }
    const size_t done = tail.rfind("event: done\n");
    if (reader.status() != 200 || done == std::string::npos
        || tail.find("\"status\":\"ok\"", done) == std::string::npos) {
        state.SkipWithError(("the stream did not end with a done event of status ok: " + tail.substr(tail.size() > 600 ? tail.size() - 600 : 0)).c_str());
        return;
    }
    // What the server recorded of the run: all of the output, nothing truncated. The history
    // is written in batches, so the row may trail the stream by a few milliseconds.
    HttpResponseReader history;
    QJsonObject entry;
    for (int attempt = 0; attempt < 200; ++attempt) {
        if (auto failed = call(connection, history, "GET",
                               "/v1/contexts/" + context + "/executions?limit=1", {}, 200)) {
            state.SkipWithError(failed->c_str());
            return;
        }
        entry = parseObject(history.body()).value(QStringLiteral("executions")).toArray().first().toObject();
        if (entry.value(QStringLiteral("status")).toString() == QLatin1String("ok"))
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const qint64 outputBytes = entry.value(QStringLiteral("output_bytes")).toInteger();
    if (outputBytes != kStreamMiB * kMiB || entry.value(QStringLiteral("truncated")).toBool()) {
        state.SkipWithError(("the server recorded " + std::to_string(outputBytes) + " bytes of output: " + history.body()).c_str());
        return;
    }
    const double mib = double(kStreamMiB);
    state.counters["output_mib_per_s"] = mib / seconds;
    state.counters["wire_mib_per_s"] = double(reader.bodyBytes()) / double(kMiB) / seconds;
    state.counters["events"] = double(events);
    state.counters["rss_before_mib"] = double(rssBefore) / 1024.0;
    state.counters["rss_peak_growth_mib"] = double(rssPeak - rssBefore) / 1024.0;
}

// ---- the summary ----------------------------------------------------------------------------

void printSummary(const FigureReporter &reporter)
{
    std::printf("\nRound trip of `x = 1`, per iteration: median (mean) in µs\n");
    std::printf("%-34s %17s %17s %15s\n", "placement", "engine", "http", "http/engine");
    std::vector<std::string> verdicts;
    for (Placement placement : {Placement::SameCpu, Placement::CrossCpu}) {
        const auto *engine = reporter.figure(caseName("engine", placement));
        const auto *http = reporter.figure(caseName("http", placement));
        const auto cell = &FigureReporter::medianAndMean;
        double ratio = 0;
        char ratioText[64] = "-";
        if (engine && http && engine->p50Us > 0 && http->p50Us > 0) {
            ratio = http->p50Us / engine->p50Us;
            std::snprintf(ratioText, sizeof ratioText, "%.2fx (%.2fx)", ratio,
                          http->meanUs / engine->meanUs);
        }
        const char *label = placement == Placement::SameCpu ? "same CPU (all on CPU0)"
                                                            : "cross CPU (worker on CPU1)";
        std::printf("%-34s %17s %17s %15s\n", label, cell(engine).c_str(), cell(http).c_str(),
                    ratioText);
        verdicts.push_back(std::string("  ") + label + ": http/engine "
                           + (ratio > 0 ? (ratio <= 2 ? "met" : "MISSED") : "n/a")
                           + " (target <= 2x)");
    }
    for (Placement placement : {Placement::SameCpu, Placement::CrossCpu}) {
        const auto *http = reporter.figure(caseName("http", placement));
        const auto *mcp = reporter.figure(caseName("mcp", placement));
        if (!http || !mcp || http->p50Us <= 0)
            continue;
        const double ratio = mcp->p50Us / http->p50Us;
        const char *label = placement == Placement::SameCpu ? "same CPU" : "cross CPU";
        std::printf("%s: MCP run_code %.1f µs against the native ?wait=true %.1f µs (median): %.2fx\n",
                    label, mcp->p50Us, http->p50Us, ratio);
        verdicts.push_back(std::string("  ") + label + ": mcp/http " + (ratio <= 1.5 ? "met" : "MISSED")
                           + " (target <= 1.5x)");
    }
    const auto *engine = reporter.figure(caseName("engine", Placement::SameCpu));
    const auto *http = reporter.figure(caseName("http", Placement::SameCpu));
    if (const auto *floor = reporter.figure("roundtrip/tcp_echo/same_cpu"); floor && engine && http) {
        std::printf("Same CPU: HTTP adds %.1f µs to the engine's round trip; the same bytes over "
                    "loopback TCP alone take %.1f µs (median)\n",
                    http->p50Us - engine->p50Us, floor->p50Us);
    }
    if (const auto *healthz = reporter.figure("roundtrip/healthz/same_cpu"); healthz && engine && http) {
        std::printf("Same CPU: GET /healthz takes %.1f µs; with the engine's round trip that is "
                    "%.1f µs (%.2fx the engine) before a run's own HTTP work\n",
                    healthz->p50Us, healthz->p50Us + engine->p50Us,
                    (healthz->p50Us + engine->p50Us) / engine->p50Us);
    }
    if (const auto *throughput = reporter.figure("throughput/http")) {
        const double rate = throughput->counter("exec_per_s");
        std::printf("\nThroughput, %d clients x %d contexts: %.0f executions/s, p50 %.0f µs, "
                    "p99 %.0f µs; server RSS %.1f -> %.1f MiB\n",
                    kClients, kContexts, rate, throughput->counter("p50_us"),
                    throughput->counter("p99_us"), throughput->counter("rss_before_mib"),
                    throughput->counter("rss_after_mib"));
        verdicts.push_back(std::string("  throughput: ") + (rate >= 10000 ? "met" : "MISSED")
                           + " (target >= 10,000 executions/s)");
    }
    if (const auto *stream = reporter.figure("stream/http")) {
        const double rate = stream->counter("output_mib_per_s");
        const double growth = stream->counter("rss_peak_growth_mib");
        std::printf("Streaming %lld MiB of stdout: %.0f MiB/s of output (%.0f MiB/s on the wire), "
                    "server RSS peak growth %.1f MiB\n",
                    static_cast<long long>(kStreamMiB), rate, stream->counter("wire_mib_per_s"), growth);
        verdicts.push_back(std::string("  streaming rate: ") + (rate >= 100 ? "met" : "MISSED")
                           + " (target >= 100 MB/s)");
        verdicts.push_back(std::string("  streaming memory: ") + (growth < 64 ? "met" : "MISSED")
                           + " (target < 64 MiB of growth)");
    }
    std::printf("Targets, on medians:\n");
    for (const std::string &verdict : verdicts)
        std::printf("%s\n", verdict.c_str());
}

} // namespace

int main(int argc, char **argv)
{
    // Before anything starts a thread or a child: the engine's threads, the server and every
    // worker inherit CPU0; cases that want another placement move what they need.
    if (!pinThread(0, kHostCpu)) {
        std::perror("sched_setaffinity(CPU0)");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);

    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    QCoreApplication app(argc, argv);

    Fixtures fixtures;
    g_fixtures = &fixtures;
    fixtures.python = qEnvironmentVariable("REPLHOST_BENCH_PYTHON", QStringLiteral("/usr/bin/python3"));

    fixtures.engine.open(fixtures.engineDir.path(), ServerProcess::pluginDir(), fixtures.python);
    benchmark::AddCustomContext("python", fixtures.python.toStdString());
    benchmark::AddCustomContext("server", ServerProcess::executable().toStdString());

    auto roundTrip = [](benchmark::internal::Benchmark *b) {
        b->Iterations(kRoundTrips)->UseRealTime()->Unit(benchmark::kMicrosecond);
    };
    // Placement-major, so the two cases of a ratio run a minute apart at most.
    for (Placement placement : {Placement::SameCpu, Placement::CrossCpu}) {
        roundTrip(benchmark::RegisterBenchmark(caseName("engine", placement).c_str(),
                                               BM_EngineRoundTrip, placement));
        roundTrip(benchmark::RegisterBenchmark(caseName("http", placement).c_str(),
                                               BM_HttpRoundTrip, placement));
        roundTrip(benchmark::RegisterBenchmark(caseName("mcp", placement).c_str(),
                                               BM_McpRoundTrip, placement));
        // Neither moves across CPUs, so each has one placement.
        if (placement == Placement::SameCpu) {
            roundTrip(benchmark::RegisterBenchmark("roundtrip/tcp_echo/same_cpu", BM_TcpEchoRoundTrip));
            roundTrip(benchmark::RegisterBenchmark("roundtrip/healthz/same_cpu", BM_HealthzRoundTrip));
        }
    }
    benchmark::RegisterBenchmark("throughput/http", BM_HttpThroughput)
            ->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("stream/http", BM_HttpStream)
            ->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

    FigureReporter::runAndSummarise(printSummary);

    fixtures.server.stop();
    fixtures.engine.close();
    g_fixtures = nullptr;
    return 0;
}
