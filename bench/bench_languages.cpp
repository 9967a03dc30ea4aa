// SPDX-License-Identifier: Apache-2.0
//
// What the engine costs per language, each figure next to the bare runtime measured in the same
// run:
//   engine_roundtrip/<lang>  ContextManager::run() of a trivial cell on a warm context, until its
//                            Execution is finished
//   pipe_roundtrip/<lang>    one line to a bare line-echo loop in the same runtime and back over
//                            two pipes; for Go, whose runtime is the yaegi worker, one execute
//                            request straight to the worker binary over the protocol fds, until
//                            its `done` (the engine's own framing, without the engine); for R,
//                            whose runtime is a Jupyter kernel (IRkernel, through
//                            plugins/jupyter), the same cell to the same kernel through
//                            jupyter_client directly (jupyter_roundtrip.py), until its
//                            execute_reply and iopub idle
//   engine_cold/<lang>       create a context and run the trivial cell once (worker start,
//                            driver start-up, first run), until the Execution is finished
//   bare_start/<lang>        start the bare runtime and wait for its exit (`python3 -c pass`,
//                            `bash -c :`, `node -e 0`, `perl -e 0`, `java -version`, the Go
//                            worker's `--version`)
// The warm cases also report rss_kib: the resident memory of the idle worker's whole process
// group, and of the bare echo loop's. After the table, main() prints one line per language with
// the ratios.
//
// Environment: REPLHOST_BENCH_LANGUAGES (comma-separated) limits the languages measured;
// REPLHOST_BENCH_PYTHON is the Python of both the engine and the bare cases (default
// /usr/bin/python3: a version manager's shim on PATH would add its own start-up to the bare one).

#include "figurereporter.h"
#include "latencysamples.h"
#include "linechild.h"
#include "warmenginecontext.h"

#include "core/engine.h"
#include "core/execution.h"

#include <benchmark/benchmark.h>

#include <QCoreApplication>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace replhost;
using namespace replhost::bench;
using Clock = std::chrono::steady_clock;

constexpr int kWarmIterations = 2000;
constexpr int kWarmups = 50;
constexpr int kColdIterations = 5;
constexpr int kBareStartIterations = 20;

struct Language {
    std::string id;
    QString setup;    // the warm context's first run
    QString trivial;  // the timed cell
    std::vector<std::string> bareStart;  // program and arguments; [0] is looked up on PATH
    std::vector<std::string> echoLoop;   // a line-echo loop in the bare runtime; empty for Go
    std::string kernelspec;  // a Jupyter kernel's: the baseline is jupyter_client to it
};

// The Java echo loop is a single-file source program the launcher compiles in memory.
const char *const kJavaEcho = R"(public class Echo {
    public static void main(String[] args) throws Exception {
        var in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            System.out.println(line);
            System.out.flush();
        }
    }
}
)";

std::vector<Language> languages(const std::string &python, const QString &javaEchoFile)
{
    return {
        {"python", "x = 0", "x = 1", {python, "-c", "pass"},
         {python, "-u", "-c", "import sys\nfor line in sys.stdin: sys.stdout.write(line)"}, {}},
        {"bash", "x=0", "x=1", {"bash", "-c", ":"},
         {"bash", "-c", "while IFS= read -r line; do printf '%s\\n' \"$line\"; done"}, {}},
        {"javascript", "let x = 0", "x = 1", {"node", "-e", "0"},
         {"node", "-e",
          "require('readline').createInterface({ input: process.stdin })"
          ".on('line', l => process.stdout.write(l + '\\n'))"}, {}},
        {"perl", "our $x = 0;", "$x = 1;", {"perl", "-e", "0"},
         {"perl", "-e", "$| = 1; print while <STDIN>"}, {}},
        {"java", "int x = 0;", "x = 1;", {"java", "-version"},
         {"java", javaEchoFile.toStdString()}, {}},
        {"go", "x := 0", "x = 1", {}, {}, {}},
        {"r", "x <- 0", "x <- 1", {"R", "--slave", "-e", "invisible(0)"}, {}, "ir"},
    };
}

std::string pluginDir() { return REPLHOST_BENCH_PLUGIN_DIR; }
std::string goWorker() { return pluginDir() + "/replhost-go-worker"; }

std::string resolve(const std::string &program)
{
    if (program.find('/') != std::string::npos)
        return program;
    return QStandardPaths::findExecutable(QString::fromStdString(program)).toStdString();
}

// Resident memory of every process in the process group of `pid`, in KiB.
double groupRssKib(pid_t pid)
{
    const pid_t group = getpgid(pid);
    if (group < 0)
        return 0;
    double total = 0;
    for (const QString &entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
        bool numeric = false;
        const int other = entry.toInt(&numeric);
        if (!numeric || getpgid(other) != group)
            continue;
        QFile status(QStringLiteral("/proc/%1/status").arg(other));
        if (!status.open(QIODevice::ReadOnly))
            continue;
        for (const QByteArray &line : status.readAll().split('\n')) {
            if (line.startsWith("VmRSS:"))
                total += line.mid(6).trimmed().split(' ').first().toDouble();
        }
    }
    return total;
}

// A bare runtime in its own process group, with pipes to the fds the caller names: `toFd` gets
// what send() writes, `fromFd` is what receive() reads. Every other standard fd is /dev/null.
class BareProcess {
public:
    ~BareProcess() { stop(); }

    std::optional<std::string> start(std::vector<std::string> argv, int toFd, int fromFd)
    {
        argv[0] = resolve(argv[0]);
        if (argv[0].empty())
            return "not found on PATH";
        int in[2], out[2];
        if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
            return std::string("pipe2: ") + strerror(errno);
        m_pid = fork();
        if (m_pid == 0) {
            setpgid(0, 0);
            const int null = open("/dev/null", O_RDWR);
            for (int fd = 0; fd <= 4; ++fd)
                dup2(null, fd);
            dup2(in[0], toFd);
            dup2(out[1], fromFd);
            std::vector<char *> args;
            for (std::string &arg : argv)
                args.push_back(arg.data());
            args.push_back(nullptr);
            execv(args[0], args.data());
            _exit(127);
        }
        close(in[0]);
        close(out[1]);
        m_in = in[1];
        m_out = out[0];
        if (m_pid < 0)
            return std::string("fork: ") + strerror(errno);
        return std::nullopt;
    }

    pid_t pid() const { return m_pid; }

    bool send(const std::string &data)
    {
        for (size_t done = 0; done < data.size();) {
            const ssize_t n = write(m_in, data.data() + done, data.size() - done);
            if (n <= 0 && errno != EINTR)
                return false;
            done += n > 0 ? size_t(n) : 0;
        }
        return true;
    }

    // Reads until `buffer` holds `wanted`, then drops everything up to and including it.
    bool receiveUntil(const std::string &wanted)
    {
        for (;;) {
            const size_t at = m_buffer.find(wanted);
            if (at != std::string::npos) {
                m_buffer.erase(0, at + wanted.size());
                return true;
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

    void stop()
    {
        if (m_in >= 0)
            close(m_in);
        if (m_pid > 0) {
            kill(-m_pid, SIGKILL);
            waitpid(m_pid, nullptr, 0);
        }
        if (m_out >= 0)
            close(m_out);
        m_in = m_out = -1;
        m_pid = -1;
    }

private:
    pid_t m_pid = -1;
    int m_in = -1;
    int m_out = -1;
    std::string m_buffer;
};

// A worker protocol frame: the length of the JSON in bytes, a newline, the JSON.
std::string frame(const std::string &json) { return std::to_string(json.size()) + "\n" + json; }

struct Fixtures {
    QTemporaryDir scratch;
    std::string python;
    QString javaEcho;
    std::vector<Language> languages;
    std::map<std::string, std::unique_ptr<WarmEngineContext>> warm;
};
Fixtures *g_fixtures = nullptr;

WarmEngineContext *warmContext(const Language &language, benchmark::State &state)
{
    auto &slot = g_fixtures->warm[language.id];
    if (!slot) {
        slot = std::make_unique<WarmEngineContext>();
        const QString dataDir = g_fixtures->scratch.filePath(
            QStringLiteral("engine-%1").arg(QString::fromStdString(language.id)));
        if (auto error = slot->open(dataDir, QString::fromStdString(pluginDir()),
                                    QString::fromStdString(g_fixtures->python))) {
            state.SkipWithError(error->c_str());
            return nullptr;
        }
        slot->setLanguage(QString::fromStdString(language.id), language.setup);
    }
    if (auto error = slot->ensureStarted()) {
        state.SkipWithError(error->c_str());
        return nullptr;
    }
    return slot.get();
}

void engineRoundtrip(benchmark::State &state, const Language &language)
{
    WarmEngineContext *engine = warmContext(language, state);
    if (!engine)
        return;
    engine->measure(state, language.trivial, kWarmups);
    state.counters["rss_kib"] = groupRssKib(engine->workerPid());
}

// The same cell to the same kernel through jupyter_client, which waits for execute_reply and
// the iopub idle as plugins/jupyter does; the helper's pipe hop to this process is a same-CPU
// line round trip (bench_roundtrip's BM_Jupyter measures it at about 15 µs).
void jupyterClientRoundtrip(benchmark::State &state, const Language &language)
{
    const QString script =
        QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("jupyter_roundtrip.py"));
    LineChild helper;
    std::string error;
    if (!helper.start({g_fixtures->python, script.toStdString(), std::to_string(kWarmups),
                       language.kernelspec},
                      &error)) {
        state.SkipWithError(error.c_str());
        return;
    }
    std::string line;
    if (!helper.readLine(&line, 180000) || line.rfind("ready ", 0) != 0) {
        state.SkipWithError(("the jupyter_client helper did not become ready for kernelspec "
                             + language.kernelspec + ": " + line).c_str());
        return;
    }
    const pid_t kernel = pid_t(std::atol(line.c_str() + 6));
    const std::string request = language.trivial.toStdString() + "\n";
    LatencySamples samples(state.max_iterations);
    for (auto _ : state) {
        const auto start = Clock::now();
        if (!helper.writeAll(request) || !helper.readLine(&line, 60000) || line.rfind("ok ", 0) != 0) {
            state.SkipWithError(("the jupyter_client helper answered \"" + line + "\"").c_str());
            return;
        }
        samples.add(Clock::now() - start);
    }
    samples.report(state);
    state.counters["rss_kib"] = groupRssKib(kernel);
}

void pipeRoundtrip(benchmark::State &state, const Language &language)
{
    if (!language.kernelspec.empty()) {
        jupyterClientRoundtrip(state, language);
        return;
    }
    BareProcess bare;
    const bool go = language.echoLoop.empty();
    // The Go worker reads requests on fd 3 and writes events on fd 4.
    if (auto error = go ? bare.start({goWorker()}, 3, 4) : bare.start(language.echoLoop, 0, 1)) {
        state.SkipWithError(error->c_str());
        return;
    }
    int sequence = 0;
    auto roundTrip = [&]() {
        if (!go)
            return bare.send("ping\n") && bare.receiveUntil("ping\n");
        const std::string id = std::to_string(++sequence);
        return bare.send(frame(R"({"type":"execute","id":")" + id + R"(","code":")"
                               + (sequence == 1 ? "x := 0" : "x = 1")
                               + R"(","execution_count":)" + id + "}"))
               && bare.receiveUntil(R"("type":"done")");
    };
    if (go
        && !(bare.send(frame(R"({"type":"init","id":"init","protocol":1,)"
                             R"("mark_nonce":"0123456789abcdef0123456789abcdef"})"))
             && bare.receiveUntil(R"("type":"hello")"))) {
        state.SkipWithError("the Go worker did not answer init");
        return;
    }
    for (int i = 0; i < kWarmups; ++i) {
        if (!roundTrip()) {
            state.SkipWithError("the bare runtime did not answer");
            return;
        }
    }
    LatencySamples samples(state.max_iterations);
    for (auto _ : state) {
        const auto start = Clock::now();
        if (!roundTrip()) {
            state.SkipWithError("the bare runtime stopped answering");
            return;
        }
        samples.add(Clock::now() - start);
    }
    samples.report(state);
    state.counters["rss_kib"] = groupRssKib(bare.pid());
}

void engineCold(benchmark::State &state, const Language &language)
{
    WarmEngineContext *warm = warmContext(language, state);
    if (!warm)
        return;
    core::ContextManager &contexts = warm->engine()->contexts();
    LatencySamples samples(state.max_iterations);
    for (auto _ : state) {
        const auto start = Clock::now();
        core::CreateContextRequest create;
        create.language = QString::fromStdString(language.id);
        auto created = contexts.create(create);
        if (!created) {
            state.SkipWithError(created.error().message.toStdString().c_str());
            return;
        }
        core::RunRequest request;
        request.contextId = created->id;
        request.code = language.setup;
        auto started = contexts.run(request);
        if (!started) {
            state.SkipWithError(started.error().message.toStdString().c_str());
            return;
        }
        const core::ExecutionPtr execution = *started;
        if (!execution->isFinished()) {
            QEventLoop loop;
            QObject::connect(execution.get(), &core::Execution::finished, &loop,
                             &QEventLoop::quit);
            loop.exec();
        }
        const auto elapsed = Clock::now() - start;
        state.SetIterationTime(std::chrono::duration<double>(elapsed).count());
        samples.add(elapsed);
        if (execution->status() != QLatin1String("ok")) {
            state.SkipWithError(("first run ended " + execution->status().toStdString()).c_str());
            return;
        }
        if (auto removed = contexts.remove({}, created->id); !removed) {
            state.SkipWithError(removed.error().message.toStdString().c_str());
            return;
        }
    }
    samples.report(state);
}

void bareStart(benchmark::State &state, const Language &language)
{
    std::vector<std::string> argv = language.bareStart;
    if (argv.empty())
        argv = {goWorker(), "--version"};
    LatencySamples samples(state.max_iterations);
    for (auto _ : state) {
        const auto start = Clock::now();
        BareProcess bare;
        if (auto error = bare.start(argv, 0, 1)) {
            state.SkipWithError(error->c_str());
            return;
        }
        int status = 0;
        waitpid(bare.pid(), &status, 0);
        const auto elapsed = Clock::now() - start;
        state.SetIterationTime(std::chrono::duration<double>(elapsed).count());
        samples.add(elapsed);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            state.SkipWithError((argv[0] + " did not exit 0").c_str());
            return;
        }
    }
    samples.report(state);
}

bool wanted(const std::string &language)
{
    const char *only = std::getenv("REPLHOST_BENCH_LANGUAGES");
    return !only || !*only
           || QString::fromLatin1(only).split(QLatin1Char(',')).contains(
               QString::fromStdString(language));
}

double ratio(const FigureReporter::Figure *a, const FigureReporter::Figure *b)
{
    return a && b && b->p50Us > 0 ? a->p50Us / b->p50Us : 0;
}

void summarise(const FigureReporter &reporter)
{
    std::printf("\n%-11s %12s %12s %6s | %12s %12s %6s | %10s %10s\n", "language",
                "engine p50", "pipe p50", "ratio", "cold p50", "bare p50", "ratio",
                "RSS worker", "RSS bare");
    for (const Language &language : g_fixtures->languages) {
        if (!wanted(language.id))
            continue;
        const auto *engine = reporter.figure("engine_roundtrip/" + language.id);
        const auto *pipe = reporter.figure("pipe_roundtrip/" + language.id);
        const auto *cold = reporter.figure("engine_cold/" + language.id);
        const auto *bare = reporter.figure("bare_start/" + language.id);
        auto us = [](const FigureReporter::Figure *f) { return f ? f->p50Us : 0.0; };
        auto mib = [](const FigureReporter::Figure *f) {
            return f ? f->counter("rss_kib") / 1024 : 0.0;
        };
        std::printf("%-11s %9.1f us %9.1f us %5.1fx | %9.1f ms %9.1f ms %5.1fx | %6.1f MiB "
                    "%6.1f MiB\n",
                    language.id.c_str(), us(engine), us(pipe), ratio(engine, pipe),
                    us(cold) / 1000, us(bare) / 1000, ratio(cold, bare), mib(engine), mib(pipe));
    }
    std::printf("(r: \"pipe\" is the same cell through jupyter_client straight to IRkernel)\n");
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    benchmark::Initialize(&argc, argv);
    Fixtures fixtures;
    g_fixtures = &fixtures;
    fixtures.javaEcho = fixtures.scratch.filePath(QStringLiteral("Echo.java"));
    QFile echo(fixtures.javaEcho);
    if (!echo.open(QIODevice::WriteOnly) || echo.write(kJavaEcho) < 0) {
        std::fprintf(stderr, "cannot write %s\n", qPrintable(fixtures.javaEcho));
        return 1;
    }
    echo.close();
    const char *python = std::getenv("REPLHOST_BENCH_PYTHON");
    fixtures.python = python && *python ? python : "/usr/bin/python3";
    fixtures.languages = languages(fixtures.python, fixtures.javaEcho);

    for (const Language &language : fixtures.languages) {
        if (!wanted(language.id))
            continue;
        benchmark::RegisterBenchmark(("engine_roundtrip/" + language.id).c_str(), engineRoundtrip,
                                     language)
            ->Iterations(kWarmIterations)->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("pipe_roundtrip/" + language.id).c_str(), pipeRoundtrip,
                                     language)
            ->Iterations(kWarmIterations)->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("engine_cold/" + language.id).c_str(), engineCold, language)
            ->Iterations(kColdIterations)->UseManualTime()->Unit(benchmark::kMillisecond);
        benchmark::RegisterBenchmark(("bare_start/" + language.id).c_str(), bareStart, language)
            ->Iterations(kBareStartIterations)->UseManualTime()->Unit(benchmark::kMillisecond);
    }
    FigureReporter::runAndSummarise(summarise);
    fixtures.warm.clear();
    g_fixtures = nullptr;
    return 0;
}
