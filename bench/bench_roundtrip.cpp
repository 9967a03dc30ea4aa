// SPDX-License-Identifier: Apache-2.0
//
// Round trip of a trivial Python execution (`x = 1`), side by side in one run:
//   engine       ContextManager::run() on a warm context, until its Execution is finished
//   pipe_worker  the minimal persistent worker of the baselines: one JSON line in, exec() in a
//                persistent namespace, one JSON line out, over two pipes, same interpreter
//   pipe_echo    the same process echoing the line without running anything: the IPC floor
//   jupyter      jupyter_client → ipykernel, execute_reply and IOPub idle
// each with host and worker on one CPU and on different CPUs, because a cross-CPU wake-up costs
// about 20 µs on the reference machine. After the table, main() prints the ratios the design's
// targets are stated in (Jupyter / engine ≥ 50, engine / pipe worker ≤ 2 at the same placement).
//
// Environment: REPLHOST_BENCH_PYTHON picks the interpreter (default /usr/bin/python3, which has
// ipykernel and jupyter_client on Debian); the engine's Python plugin is configured with it and
// the pipe workers run the executable the plugin resolves from it.

#include "core/engine.h"
#include "core/execution.h"

#include <benchmark/benchmark.h>

#include <QCoreApplication>
#include <QDir>
#include <QEventLoop>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTimer>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

namespace {

using namespace replhost;
using Clock = std::chrono::steady_clock;

constexpr int kHostCpu = 0;
constexpr int kOtherCpu = 1;
const QString kCode = QStringLiteral("x = 1");

// Fixed iteration counts rather than a minimum time: every case then has enough samples for its
// p99, and a whole run takes a predictable half minute.
constexpr int kFastIterations = 20000;
constexpr int kJupyterIterations = 2000;
// Before each timed loop, after the worker has been (re)pinned: caches, branch predictors and
// the interpreter's own lazy paths settle on the new CPU.
constexpr int kFastWarmups = 1000;
constexpr int kJupyterWarmups = 50;

enum class Placement { SameCpu, CrossCpu };

int workerCpu(Placement placement)
{
    return placement == Placement::SameCpu ? kHostCpu : kOtherCpu;
}

const char *placementSuffix(Placement placement)
{
    return placement == Placement::SameCpu ? "same_cpu" : "cross_cpu";
}

bool pinThread(pid_t tid, int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(tid, sizeof set, &set) == 0;
}

// Pins every thread of `pid` and of its descendants; returns how many threads were pinned.
// sched_setaffinity() moves one thread only, and a Jupyter kernel runs several (ZeroMQ I/O,
// IOPub, heartbeat, control), and ZeroMQ's I/O threads take part in every round trip.
int pinProcessTree(pid_t pid, int cpu)
{
    int pinned = 0;
    std::error_code ec;
    const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
    for (const auto &task : std::filesystem::directory_iterator(tasks, ec)) {
        const pid_t tid = pid_t(std::atoi(task.path().filename().c_str()));
        if (tid > 0 && pinThread(tid, cpu))
            ++pinned;
        std::ifstream children(task.path() / "children");
        for (pid_t child; children >> child;)
            pinned += pinProcessTree(child, cpu);
    }
    return pinned;
}

// What the scheduler recorded for a set of threads: CPU time, and how many times one of them was
// switched onto a CPU. The counters built on it say where a round trip's work happens (host,
// worker, or Jupyter's client helper) and how often each side had to be woken for it.
struct SchedUse {
    qint64 cpuNs = 0;
    qint64 runs = 0;

    SchedUse &operator+=(const SchedUse &other)
    {
        cpuNs += other.cpuNs;
        runs += other.runs;
        return *this;
    }
    SchedUse operator-(const SchedUse &other) const
    {
        return {cpuNs - other.cpuNs, runs - other.runs};
    }
};

// Every thread of `pid`, and of its descendants when `withChildren`, from schedstat
// (on-CPU ns, wait ns, times run).
SchedUse schedUse(pid_t pid, bool withChildren = true)
{
    SchedUse total;
    std::error_code ec;
    const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
    for (const auto &task : std::filesystem::directory_iterator(tasks, ec)) {
        std::ifstream schedstat(task.path() / "schedstat");
        long long onCpu = 0, waiting = 0, runs = 0;
        if (schedstat >> onCpu >> waiting >> runs)
            total += SchedUse{onCpu, runs};
        if (!withChildren)
            continue;
        std::ifstream children(task.path() / "children");
        for (pid_t child; children >> child;)
            total += schedUse(child);
    }
    return total;
}

// The host's own threads only: its children are the workers.
SchedUse hostUse()
{
    return schedUse(getpid(), false);
}

// Waits until the host has stopped working in the background (at most `maxMs`): the engine's
// history writer commits in batches and can trail the executions it records, and that backlog
// must neither disturb the next case nor escape the CPU counters of the case that caused it.
void settleHost(int maxMs = 30000)
{
    constexpr qint64 kWindowNs = 100'000'000;
    constexpr qint64 kIdleNs = 2'000'000;  // under 2% of one CPU counts as settled
    const auto deadline = Clock::now() + std::chrono::milliseconds(maxMs);
    for (qint64 before = hostUse().cpuNs; Clock::now() < deadline;) {
        std::this_thread::sleep_for(std::chrono::nanoseconds(kWindowNs));
        const qint64 after = hostUse().cpuNs;
        if (after - before < kIdleNs)
            return;
        before = after;
    }
}

// Per iteration, across the timed loop: CPU time and runs of the host and of other process
// trees, as counters "<name>_cpu_us" and "<name>_runs".
class SchedMeter {
public:
    explicit SchedMeter(std::vector<std::pair<std::string, pid_t>> others)
        : m_others(std::move(others))
    {
        settleHost();
        for (const auto &[name, pid] : m_others)
            m_start.push_back(schedUse(pid));
        m_host = hostUse();
    }

    // Call after the timed loop; includes the host's trailing background work (settleHost()).
    void report(benchmark::State &state)
    {
        settleHost();
        const double n = double(std::max<benchmark::IterationCount>(1, state.iterations()));
        auto put = [&](const std::string &name, const SchedUse &used) {
            state.counters[name + "_cpu_us"] = double(used.cpuNs) / n / 1000.0;
            state.counters[name + "_runs"] = double(used.runs) / n;
        };
        put("host", hostUse() - m_host);
        for (size_t i = 0; i < m_others.size(); ++i)
            put(m_others[i].first, schedUse(m_others[i].second) - m_start[i]);
    }

private:
    std::vector<std::pair<std::string, pid_t>> m_others;
    std::vector<SchedUse> m_start;
    SchedUse m_host;
};

// Per-iteration latencies, for percentiles: the VM is noisy, so the median says more than the
// mean Google Benchmark reports, and the tail says whether a figure is trustworthy.
class Samples {
public:
    explicit Samples(benchmark::IterationCount n) { m_ns.reserve(size_t(n)); }
    void add(Clock::duration d) { m_ns.push_back(double(std::chrono::nanoseconds(d).count())); }
    void add(double ns) { m_ns.push_back(ns); }

    // Nearest-rank percentile in µs; sorts in place.
    double percentileUs(double p)
    {
        if (m_ns.empty())
            return 0;
        std::sort(m_ns.begin(), m_ns.end());
        const size_t rank = std::min(m_ns.size() - 1, size_t(p / 100.0 * double(m_ns.size())));
        return m_ns[rank] / 1000.0;
    }

    void report(benchmark::State &state)
    {
        state.counters["p50_us"] = percentileUs(50);
        state.counters["p90_us"] = percentileUs(90);
        state.counters["p99_us"] = percentileUs(99);
    }

private:
    std::vector<double> m_ns;
};

// A child process with a pipe to its stdin and one from its stdout, exchanging lines. It runs
// in the host's CPU set (inherited) until it is pinned elsewhere.
class LineChild {
public:
    ~LineChild() { stop(); }

    bool start(const std::vector<std::string> &argv, std::string *error)
    {
        int toChild[2], fromChild[2];
        if (pipe2(toChild, O_CLOEXEC) != 0 || pipe2(fromChild, O_CLOEXEC) != 0) {
            *error = "pipe2 failed";
            return false;
        }
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0);
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1);
        std::vector<char *> args;
        for (const std::string &arg : argv)
            args.push_back(const_cast<char *>(arg.c_str()));
        args.push_back(nullptr);
        const int rc = posix_spawn(&m_pid, args[0], &actions, nullptr, args.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        close(toChild[0]);
        close(fromChild[1]);
        m_in = toChild[1];
        m_out = fromChild[0];
        if (rc != 0) {
            *error = "cannot start " + argv[0] + ": " + strerror(rc);
            m_pid = -1;
            stop();
            return false;
        }
        return true;
    }

    // Closing its stdin asks the child to finish; it gets `graceMs`, then SIGKILL.
    void stop(int graceMs = 20000)
    {
        if (m_in >= 0)
            close(m_in);
        m_in = -1;
        if (m_pid > 0) {
            const auto deadline = Clock::now() + std::chrono::milliseconds(graceMs);
            while (waitpid(m_pid, nullptr, WNOHANG) == 0) {
                if (Clock::now() > deadline) {
                    kill(m_pid, SIGKILL);
                    waitpid(m_pid, nullptr, 0);
                    break;
                }
                usleep(10000);
            }
            m_pid = -1;
        }
        if (m_out >= 0)
            close(m_out);
        m_out = -1;
    }

    pid_t pid() const { return m_pid; }

    bool writeAll(const std::string &data)
    {
        size_t done = 0;
        while (done < data.size()) {
            const ssize_t n = write(m_in, data.data() + done, data.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return false;
            done += size_t(n);
        }
        return true;
    }

    // Reads one line (without the newline). `timeoutMs` < 0 blocks without poll(), as the
    // timed loops must: one read() per reply, like the baseline's client.
    bool readLine(std::string *line, int timeoutMs = -1)
    {
        for (;;) {
            const size_t eol = m_buffer.find('\n');
            if (eol != std::string::npos) {
                line->assign(m_buffer, 0, eol);
                m_buffer.erase(0, eol + 1);
                return true;
            }
            if (timeoutMs >= 0) {
                pollfd pfd{m_out, POLLIN, 0};
                if (poll(&pfd, 1, timeoutMs) <= 0)
                    return false;
            }
            char chunk[4096];
            const ssize_t n = read(m_out, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return false;
            m_buffer.append(chunk, size_t(n));
        }
    }

private:
    pid_t m_pid = -1;
    int m_in = -1;
    int m_out = -1;
    std::string m_buffer;
};

// The minimal persistent worker of the baselines, reading lines instead of length prefixes.
// "exec" mode does what the anchors' worker does per request (json.loads, exec in a persistent
// namespace, json.dumps); "echo" mode only sends the line back.
const char *const kPipeWorkerSource = R"(
import json, os, sys
def main(mode):
    readline, write = sys.stdin.buffer.readline, os.write
    if mode == 'echo':
        while line := readline():
            write(1, line)
        return
    ns = {'__name__': '__main__', '__builtins__': __builtins__}
    loads, dumps = json.loads, json.dumps
    while line := readline():
        reply = {'ok': True}
        try:
            exec(compile(loads(line)['code'], '<cell>', 'exec'), ns)
        except BaseException as e:
            reply = {'ok': False, 'error': repr(e)}
        write(1, dumps(reply).encode() + b'\n')
main(sys.argv[1])
)";

// Everything the cases share, created once in main(). The engine is opened up front (it is
// cheap without contexts) so that every case learns the interpreter from the Python plugin.
struct Fixtures {
    QString requestedPython;
    QTemporaryDir dataDir;
    std::unique_ptr<core::Engine> engine;
    std::string engineError;
    std::string python;  // what the plugin resolved; the pipe workers run it

    // The engine case's warm context, created on first use.
    QString contextId;
    pid_t contextPid = 0;

    std::map<std::string, std::unique_ptr<LineChild>> pipeWorkers;  // by mode
    std::unique_ptr<LineChild> jupyter;
    pid_t kernelPid = 0;
    std::string jupyterError;
};

Fixtures *g_fixtures = nullptr;

bool waitFinished(const core::ExecutionPtr &execution, QEventLoop &loop, int timeoutMs)
{
    if (execution->isFinished())
        return true;
    QTimer timer;
    timer.setSingleShot(true);
    QObject::connect(&timer, &QTimer::timeout, &loop, &QEventLoop::quit);
    QObject::connect(execution.get(), &core::Execution::finished, &loop, &QEventLoop::quit);
    timer.start(timeoutMs);
    loop.exec();
    return execution->isFinished();
}

// One engine round trip, with a status check, for warm-ups and set-up.
std::optional<std::string> runOnce(const core::RunRequest &request, QEventLoop &loop,
                                   int timeoutMs = 60000)
{
    auto run = g_fixtures->engine->contexts().run(request);
    if (!run)
        return run.error().message.toStdString();
    const core::ExecutionPtr execution = *run;
    if (!waitFinished(execution, loop, timeoutMs))
        return std::string("no Done event within ") + std::to_string(timeoutMs) + " ms";
    if (execution->status() != QLatin1String("ok"))
        return "execution ended with status " + execution->status().toStdString();
    return std::nullopt;
}

std::optional<std::string> ensureContext(QEventLoop &loop)
{
    Fixtures &f = *g_fixtures;
    if (!f.engine)
        return f.engineError;
    if (!f.contextId.isEmpty())
        return std::nullopt;
    core::CreateContextRequest create;
    create.language = QStringLiteral("python");
    auto created = f.engine->contexts().create(create);
    if (!created)
        return created.error().message.toStdString();
    f.contextId = created->id;
    core::RunRequest request;
    request.contextId = f.contextId;
    request.code = QStringLiteral("x = 0");
    if (auto error = runOnce(request, loop))  // the first run also waits for the worker's start
        return error;
    auto info = f.engine->contexts().get(core::WorkspaceManager::defaultName(), f.contextId);
    if (!info || info->pid <= 0)
        return std::string("the context reports no worker pid");
    f.contextPid = pid_t(info->pid);
    return std::nullopt;
}

void pinWorker(benchmark::State &state, pid_t pid, Placement placement)
{
    if (pinProcessTree(pid, workerCpu(placement)) == 0)
        state.SkipWithError("cannot pin the worker (sched_setaffinity)");
    state.SetLabel(placement == Placement::SameCpu ? "host+worker CPU0" : "host CPU0, worker CPU1");
}

void BM_Engine(benchmark::State &state, Placement placement)
{
    Fixtures &f = *g_fixtures;
    QEventLoop loop;
    if (auto error = ensureContext(loop)) {
        state.SkipWithError(error->c_str());
        return;
    }
    pinWorker(state, f.contextPid, placement);
    if (state.error_occurred())
        return;

    core::RunRequest request;
    request.contextId = f.contextId;
    request.code = kCode;
    for (int i = 0; i < kFastWarmups; ++i) {
        if (auto error = runOnce(request, loop)) {
            state.SkipWithError(error->c_str());
            return;
        }
    }

    core::ContextManager &contexts = f.engine->contexts();
    Samples samples(state.max_iterations);
    int failed = 0;
    SchedMeter sched({{"worker", f.contextPid}});
    for (auto _ : state) {
        const auto start = Clock::now();
        auto run = contexts.run(request);
        if (!run) {
            state.SkipWithError(run.error().message.toStdString().c_str());
            break;
        }
        const core::ExecutionPtr &execution = *run;
        // No timeout timer here: arming one would be part of what is measured. The warm-up above
        // has shown the context answers.
        if (!execution->isFinished()) {
            QObject::connect(execution.get(), &core::Execution::finished, &loop,
                             &QEventLoop::quit);
            loop.exec();
        }
        samples.add(Clock::now() - start);
        if (execution->status() != QLatin1String("ok"))
            ++failed;
    }
    sched.report(state);
    if (failed)
        state.SkipWithError((std::to_string(failed) + " executions did not end \"ok\"").c_str());
    samples.report(state);
}

std::optional<std::string> ensurePipeWorker(const std::string &mode)
{
    Fixtures &f = *g_fixtures;
    if (f.pipeWorkers.count(mode))
        return std::nullopt;
    auto worker = std::make_unique<LineChild>();
    std::string error;
    // The flags the Python plugin starts its driver with, so only the work per request differs.
    if (!worker->start({f.python, "-u", "-X", "utf8", "-c", kPipeWorkerSource, mode}, &error))
        return error;
    f.pipeWorkers[mode] = std::move(worker);
    return std::nullopt;
}

void BM_Pipe(benchmark::State &state, const std::string &mode, Placement placement)
{
    if (auto error = ensurePipeWorker(mode)) {
        state.SkipWithError(error->c_str());
        return;
    }
    LineChild &worker = *g_fixtures->pipeWorkers[mode];
    pinWorker(state, worker.pid(), placement);
    if (state.error_occurred())
        return;

    const std::string request = R"({"code": "x = 1"})"
                                "\n";
    const std::string expected = mode == "echo" ? request.substr(0, request.size() - 1)
                                                : std::string(R"({"ok": true})");
    std::string reply;
    for (int i = 0; i < kFastWarmups; ++i) {
        if (!worker.writeAll(request) || !worker.readLine(&reply, 30000) || reply != expected) {
            state.SkipWithError(("the pipe worker answered \"" + reply + "\"").c_str());
            return;
        }
    }

    Samples samples(state.max_iterations);
    bool ok = true;
    SchedMeter sched({{"worker", worker.pid()}});
    for (auto _ : state) {
        const auto start = Clock::now();
        ok = worker.writeAll(request) && worker.readLine(&reply) && ok;
        samples.add(Clock::now() - start);
    }
    sched.report(state);
    if (!ok || reply != expected)
        state.SkipWithError("the pipe worker stopped answering");
    samples.report(state);
}

std::optional<std::string> ensureJupyter()
{
    Fixtures &f = *g_fixtures;
    if (f.jupyter)
        return std::nullopt;
    if (!f.jupyterError.empty())
        return f.jupyterError;
    const QString script =
        QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("jupyter_roundtrip.py"));
    auto helper = std::make_unique<LineChild>();
    std::string error;
    if (!helper->start({f.requestedPython.toStdString(), script.toStdString(), "200"}, &error)) {
        f.jupyterError = error;
        return error;
    }
    std::string ready;
    if (!helper->readLine(&ready, 180000) || ready.rfind("ready ", 0) != 0) {
        f.jupyterError = "the Jupyter helper did not become ready (is python3-ipykernel "
                         "installed for " + f.requestedPython.toStdString() + "?)";
        return f.jupyterError;
    }
    f.kernelPid = pid_t(std::atol(ready.c_str() + 6));
    std::fprintf(stderr, "jupyter: %s\n", ready.c_str());
    f.jupyter = std::move(helper);
    return std::nullopt;
}

// The helper (the Jupyter client) stays on the host's CPU in both placements, as the host's own
// stand-in; only the kernel moves. Its pipe hop to this process is a same-CPU round trip through
// Python's line I/O, negligible next to a kernel round trip: the helper times each round trip
// too, and hop_p50_us reports the difference (about 15 µs, or 0.5%, on the reference machine).
void BM_Jupyter(benchmark::State &state, Placement placement)
{
    Fixtures &f = *g_fixtures;
    if (auto error = ensureJupyter()) {
        state.SkipWithError(error->c_str());
        return;
    }
    LineChild &helper = *f.jupyter;
    pinWorker(state, f.kernelPid, placement);
    if (state.error_occurred())
        return;

    const std::string request = kCode.toStdString() + "\n";
    std::string reply;
    for (int i = 0; i < kJupyterWarmups; ++i) {
        if (!helper.writeAll(request) || !helper.readLine(&reply, 60000)
            || reply.rfind("ok ", 0) != 0) {
            state.SkipWithError(("the Jupyter helper answered \"" + reply + "\"").c_str());
            return;
        }
    }

    Samples samples(state.max_iterations);
    Samples client(state.max_iterations);
    Samples hop(state.max_iterations);  // what the pipe to the helper adds, per iteration
    bool ok = true;
    // The helper's tree includes the kernel; the client's own share is the difference.
    SchedMeter sched({{"worker", f.kernelPid}, {"helper", helper.pid()}});
    for (auto _ : state) {
        const auto start = Clock::now();
        ok = helper.writeAll(request) && helper.readLine(&reply) && ok;
        const double totalNs = double(std::chrono::nanoseconds(Clock::now() - start).count());
        const double clientNs = std::strtod(reply.c_str() + 3, nullptr);
        samples.add(totalNs);
        client.add(clientNs);
        hop.add(totalNs - clientNs);
    }
    sched.report(state);
    state.counters["client_cpu_us"] =
        double(state.counters["helper_cpu_us"]) - double(state.counters["worker_cpu_us"]);
    state.counters.erase("helper_cpu_us");
    state.counters.erase("helper_runs");
    if (!ok || reply.rfind("ok ", 0) != 0)
        state.SkipWithError(("the Jupyter helper answered \"" + reply + "\"").c_str());
    samples.report(state);
    state.counters["client_p50_us"] = client.percentileUs(50);
    state.counters["hop_p50_us"] = hop.percentileUs(50);
}

// The console table as usual, plus what the summary needs from it: the median and mean per
// iteration of every case (from the "median" aggregate when --benchmark_repetitions is used).
class SummaryReporter : public benchmark::ConsoleReporter {
public:
    struct Figure {
        double p50Us = 0;
        double meanUs = 0;
        bool fromAggregate = false;
    };

    using ConsoleReporter::ConsoleReporter;

    void ReportRuns(const std::vector<Run> &runs) override
    {
        ConsoleReporter::ReportRuns(runs);
        for (const Run &run : runs) {
            if (run.error_occurred)
                continue;
            const bool aggregate = run.run_type == Run::RT_Aggregate;
            if (aggregate && run.aggregate_name != "median")
                continue;
            Figure &figure = m_figures[run.run_name.function_name];
            if (!aggregate && figure.fromAggregate)
                continue;
            const auto p50 = run.counters.find("p50_us");
            figure.p50Us = p50 != run.counters.end() ? double(p50->second) : 0;
            figure.meanUs = run.GetAdjustedRealTime();
            figure.fromAggregate = aggregate;
        }
    }

    const Figure *figure(const std::string &name) const
    {
        const auto it = m_figures.find(name);
        return it == m_figures.end() ? nullptr : &it->second;
    }

private:
    std::map<std::string, Figure> m_figures;
};

std::string caseName(const char *what, Placement placement)
{
    return std::string("roundtrip/") + what + "/" + placementSuffix(placement);
}

void printSummary(const SummaryReporter &reporter)
{
    std::printf("\nRound trip of `x = 1`, per iteration: median (mean) in µs\n");
    std::printf("%-24s %17s %17s %17s %19s %15s %19s\n", "placement", "engine",
                "pipe_worker", "pipe_echo", "jupyter", "jupyter/engine", "engine/pipe_worker");
    std::vector<std::string> verdicts;
    for (Placement placement : {Placement::SameCpu, Placement::CrossCpu}) {
        const auto *engine = reporter.figure(caseName("engine", placement));
        const auto *worker = reporter.figure(caseName("pipe_worker", placement));
        const auto *echo = reporter.figure(caseName("pipe_echo", placement));
        const auto *jupyter = reporter.figure(caseName("jupyter", placement));
        auto cell = [](const SummaryReporter::Figure *f) {
            char text[64];
            if (!f)
                std::snprintf(text, sizeof text, "-");
            else
                std::snprintf(text, sizeof text, "%.1f (%.1f)", f->p50Us, f->meanUs);
            return std::string(text);
        };
        auto ratio = [](const SummaryReporter::Figure *a, const SummaryReporter::Figure *b,
                        double *median) {
            char text[64];
            if (!a || !b || a->p50Us <= 0 || b->p50Us <= 0) {
                *median = 0;
                std::snprintf(text, sizeof text, "-");
            } else {
                *median = a->p50Us / b->p50Us;
                std::snprintf(text, sizeof text, "%.1fx (%.1fx)", *median,
                              a->meanUs / b->meanUs);
            }
            return std::string(text);
        };
        double jupyterOverEngine = 0, engineOverWorker = 0;
        const std::string r1 = ratio(jupyter, engine, &jupyterOverEngine);
        const std::string r2 = ratio(engine, worker, &engineOverWorker);
        const char *label = placement == Placement::SameCpu ? "same CPU (CPU0+CPU0)"
                                                            : "cross CPU (CPU0, CPU1)";
        std::printf("%-24s %17s %17s %17s %19s %15s %19s\n", label, cell(engine).c_str(),
                    cell(worker).c_str(), cell(echo).c_str(), cell(jupyter).c_str(), r1.c_str(),
                    r2.c_str());
        char verdict[256];
        std::snprintf(verdict, sizeof verdict,
                      "  %-22s jupyter/engine %s (target >= 50x), engine/pipe_worker %s "
                      "(target <= 2x)",
                      label,
                      jupyterOverEngine > 0 ? (jupyterOverEngine >= 50 ? "met" : "MISSED") : "n/a",
                      engineOverWorker > 0 ? (engineOverWorker <= 2 ? "met" : "MISSED") : "n/a");
        verdicts.emplace_back(verdict);
    }
    std::printf("Targets, on medians:\n");
    for (const std::string &verdict : verdicts)
        std::printf("%s\n", verdict.c_str());
}

} // namespace

int main(int argc, char **argv)
{
    // Before anything starts a thread or a child: every thread of the host (the engine's history
    // writer included) and every worker inherits CPU0. Cross-CPU cases move only the worker.
    if (!pinThread(0, kHostCpu)) {
        std::perror("sched_setaffinity(CPU0)");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);  // a worker that died is reported, not fatal

    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    QCoreApplication app(argc, argv);

    Fixtures fixtures;
    g_fixtures = &fixtures;
    fixtures.requestedPython =
        qEnvironmentVariable("REPLHOST_BENCH_PYTHON", QStringLiteral("/usr/bin/python3"));
    fixtures.python = fixtures.requestedPython.toStdString();

    core::EngineConfig config;
    config.dataDir = fixtures.dataDir.path();
    // The build tree's plugins first, ahead of anything installed in the user's directory.
    config.pluginPaths = {QDir(QCoreApplication::applicationDirPath())
                              .absoluteFilePath(QStringLiteral("../lib/replhost/plugins"))};
    config.languageSettings = QJsonObject{
        {QStringLiteral("python"),
         QJsonObject{{QStringLiteral("interpreter"), fixtures.requestedPython}}}};
    if (auto opened = core::Engine::open(config)) {
        fixtures.engine = std::move(*opened);
        if (auto plugin = fixtures.engine->plugins().resolve(QStringLiteral("python")))
            fixtures.python = (*plugin)->runtime.executable.toStdString();
        else
            fixtures.engineError = plugin.error().message.toStdString();
    } else {
        fixtures.engineError = opened.error().message.toStdString();
    }
    benchmark::AddCustomContext("python", fixtures.python);
    benchmark::AddCustomContext("placement", "host pinned to CPU0; worker on CPU0 (same_cpu) "
                                             "or CPU1 (cross_cpu)");

    // The host waits on other processes, so its CPU time says nothing: wall clock, in µs.
    auto configure = [](benchmark::internal::Benchmark *b, benchmark::IterationCount n) {
        b->Iterations(n)->UseRealTime()->Unit(benchmark::kMicrosecond);
    };
    // Placement-major, so the cases compared in a ratio run minutes apart at most.
    for (Placement placement : {Placement::SameCpu, Placement::CrossCpu}) {
        configure(benchmark::RegisterBenchmark(caseName("engine", placement).c_str(), BM_Engine,
                                               placement),
                  kFastIterations);
        configure(benchmark::RegisterBenchmark(caseName("pipe_worker", placement).c_str(),
                                               BM_Pipe, std::string("exec"), placement),
                  kFastIterations);
        configure(benchmark::RegisterBenchmark(caseName("pipe_echo", placement).c_str(), BM_Pipe,
                                               std::string("echo"), placement),
                  kFastIterations);
        configure(benchmark::RegisterBenchmark(caseName("jupyter", placement).c_str(), BM_Jupyter,
                                               placement),
                  kJupyterIterations);
    }

    SummaryReporter reporter(isatty(STDOUT_FILENO) ? SummaryReporter::OO_ColorTabular
                                                   : SummaryReporter::OO_Tabular);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    printSummary(reporter);
    benchmark::Shutdown();

    // Workers and helpers first, then the engine (which stops its context's worker), all before
    // the application object goes.
    fixtures.pipeWorkers.clear();
    fixtures.jupyter.reset();
    fixtures.engine.reset();
    g_fixtures = nullptr;
    return 0;
}
