// SPDX-License-Identifier: Apache-2.0
// The few system calls the Java driver needs and the JVM does not offer: the JVM has no setenv,
// unsetenv or chdir (System.getenv() is a snapshot, user.dir a label), and no way to duplicate a
// file descriptor or mark one close-on-exec, and it tells Java code about a signal only later, on
// a thread of its own. Loaded by replhost.driver.Native with System.load.
//
// Strings arrive as NUL-free UTF-8 byte arrays (the driver encodes and checks them), not as
// jstring: JNI's "modified UTF-8" would mangle characters outside the BMP.
#include <jni.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <string>

#include <fcntl.h>
#include <unistd.h>

namespace {

// SIGINTs received, counted in the signal handler itself. The JVM runs Java signal handlers
// later, on a thread of their own; the count tells the driver at once, and exactly, whether a
// SIGINT arrived during an execution, so a late handler can never interrupt the next one.
std::atomic<long> sigintCount{0};
static_assert(std::atomic<long>::is_always_lock_free, "used from a signal handler");
struct sigaction jvmSigint;

void countSigint(int signal, siginfo_t *info, void *context)
{
    sigintCount.fetch_add(1, std::memory_order_relaxed);
    // Then the JVM's own handler, which hands the signal to the Java handler.
    if (jvmSigint.sa_flags & SA_SIGINFO)
        jvmSigint.sa_sigaction(signal, info, context);
    else
        jvmSigint.sa_handler(signal);
}

// The bytes of `array` as a string; false (with a pending Java exception) if it cannot be read.
bool bytes(JNIEnv *env, jbyteArray array, std::string &out)
{
    const jsize n = env->GetArrayLength(array);
    out.resize(size_t(n));
    if (n > 0)
        env->GetByteArrayRegion(array, 0, n, reinterpret_cast<jbyte *>(out.data()));
    return !env->ExceptionCheck();
}

} // namespace

extern "C" {

// 0, or the errno of setenv/unsetenv. A null value unsets the key.
JNIEXPORT jint JNICALL Java_replhost_driver_Native_setenv0(JNIEnv *env, jclass, jbyteArray key,
                                                           jbyteArray value)
{
    std::string k;
    std::string v;
    if (!bytes(env, key, k) || (value != nullptr && !bytes(env, value, v)))
        return EINVAL;
    const int rc = value != nullptr ? ::setenv(k.c_str(), v.c_str(), 1) : ::unsetenv(k.c_str());
    return rc == 0 ? 0 : errno;
}

// 0, or the errno of chdir.
JNIEXPORT jint JNICALL Java_replhost_driver_Native_chdir0(JNIEnv *env, jclass, jbyteArray path)
{
    std::string p;
    if (!bytes(env, path, p))
        return EINVAL;
    return ::chdir(p.c_str()) == 0 ? 0 : errno;
}

// The working directory as bytes, or null when it cannot be determined (deleted, too long).
JNIEXPORT jbyteArray JNICALL Java_replhost_driver_Native_getcwd0(JNIEnv *env, jclass)
{
    std::string buffer(PATH_MAX + 1, '\0');
    if (::getcwd(buffer.data(), buffer.size()) == nullptr)
        return nullptr;
    const jsize n = jsize(std::char_traits<char>::length(buffer.c_str()));
    jbyteArray result = env->NewByteArray(n);
    if (result != nullptr)
        env->SetByteArrayRegion(result, 0, n, reinterpret_cast<const jbyte *>(buffer.data()));
    return result;
}

// 0, or the errno of marking `fd` close-on-exec.
JNIEXPORT jint JNICALL Java_replhost_driver_Native_cloexec0(JNIEnv *, jclass, jint fd)
{
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags < 0 || ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0)
        return errno;
    return 0;
}

// A close-on-exec duplicate of `fd` numbered 10 or higher, or -errno.
JNIEXPORT jint JNICALL Java_replhost_driver_Native_dupCloexec0(JNIEnv *, jclass, jint fd)
{
    const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
    return copy >= 0 ? copy : -errno;
}

// Writes all of data[offset, offset + length) to `fd`: 0, or the errno that stopped it.
JNIEXPORT jint JNICALL Java_replhost_driver_Native_write0(JNIEnv *env, jclass, jint fd,
                                                          jbyteArray data, jint offset,
                                                          jint length)
{
    std::string buffer;
    buffer.resize(size_t(length));
    env->GetByteArrayRegion(data, offset, length, reinterpret_cast<jbyte *>(buffer.data()));
    if (env->ExceptionCheck())
        return EINVAL;
    size_t done = 0;
    while (done < buffer.size()) {
        const ssize_t n = ::write(fd, buffer.data() + done, buffer.size() - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        done += size_t(n);
    }
    return 0;
}

// Puts a counter in front of the SIGINT handler the JVM installed for the driver's Java handler:
// 0, or an errno (EINVAL when there is no JVM handler to chain to).
JNIEXPORT jint JNICALL Java_replhost_driver_Native_countSigints0(JNIEnv *, jclass)
{
    struct sigaction current {};
    if (::sigaction(SIGINT, nullptr, &current) != 0)
        return errno;
    const bool hasInfoHandler = (current.sa_flags & SA_SIGINFO) && current.sa_sigaction != nullptr;
    const bool hasPlainHandler = !(current.sa_flags & SA_SIGINFO) && current.sa_handler != SIG_DFL
                                 && current.sa_handler != SIG_IGN && current.sa_handler != nullptr;
    if (!hasInfoHandler && !hasPlainHandler)
        return EINVAL;
    jvmSigint = current;
    struct sigaction counting {};
    counting.sa_sigaction = countSigint;
    counting.sa_mask = current.sa_mask;
    counting.sa_flags = SA_SIGINFO | (current.sa_flags & (SA_RESTART | SA_ONSTACK));
    return ::sigaction(SIGINT, &counting, nullptr) == 0 ? 0 : errno;
}

// SIGINTs counted so far.
JNIEXPORT jlong JNICALL Java_replhost_driver_Native_sigints0(JNIEnv *, jclass)
{
    return sigintCount.load(std::memory_order_relaxed);
}

// A java.io.FileDescriptor for an inherited descriptor number, which the JDK cannot make: the
// protocol's fds 3 and 4 are used as they are instead of reopened through /proc (a reopened
// pipe would be a second descriptor that children could inherit).
JNIEXPORT jobject JNICALL Java_replhost_driver_Native_descriptor0(JNIEnv *env, jclass, jint fd)
{
    jclass type = env->FindClass("java/io/FileDescriptor");
    if (type == nullptr)
        return nullptr;
    jmethodID init = env->GetMethodID(type, "<init>", "()V");
    jfieldID field = env->GetFieldID(type, "fd", "I");
    if (init == nullptr || field == nullptr)
        return nullptr;
    jobject descriptor = env->NewObject(type, init);
    if (descriptor != nullptr)
        env->SetIntField(descriptor, field, fd);
    return descriptor;
}

} // extern "C"
