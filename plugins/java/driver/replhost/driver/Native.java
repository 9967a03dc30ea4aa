// SPDX-License-Identifier: Apache-2.0
package replhost.driver;

import java.io.File;
import java.io.FileDescriptor;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.util.Map;

/**
 * Process environment and working directory, for real.
 *
 * <p>The JVM reads the environment once and never changes the process's own, and has no chdir:
 * {@code System.getenv()} is a snapshot and {@code user.dir} only a label. Env layers and cwd must
 * reach child processes, so the changes are made with libc through a small JNI library built
 * with the plugin, and then mirrored into the JDK's cached views (the map behind
 * {@code System.getenv()}, {@code user.dir}, and the directory java.io and java.nio resolve
 * relative paths against) so Java code sees the same thing as its children.
 *
 * <p>Without the library (it failed to load), env changes reach only {@code System.getenv()} and
 * children started with a touched {@code ProcessBuilder.environment()}, and the working directory
 * cannot change; the driver says so in its log.
 */
final class Native {
    private Native() {
    }

    private static boolean loaded;
    private static String loadError = "not loaded";
    private static Map<String, String> mutableEnv;
    private static boolean envViewFailed;

    static native int setenv0(byte[] key, byte[] value);

    static native int chdir0(byte[] path);

    static native byte[] getcwd0();

    static native int cloexec0(int fd);

    static native int dupCloexec0(int fd);

    static native int write0(int fd, byte[] data, int offset, int length);

    static native FileDescriptor descriptor0(int fd);

    static native int countSigints0();

    static native long sigints0();

    static void load(String path) {
        if (path == null || path.isEmpty()) {
            loadError = "no native library was given (-Dreplhost.native)";
            return;
        }
        try {
            System.load(path);
            loaded = true;
            loadError = null;
        } catch (Throwable e) {
            loadError = e.toString();
        }
    }

    static boolean loaded() {
        return loaded;
    }

    static String loadError() {
        return loadError;
    }

    static String errnoText(int errno) {
        switch (errno) {
        case 1: return "operation not permitted";
        case 2: return "no such file or directory";
        case 12: return "out of memory";
        case 13: return "permission denied";
        case 20: return "not a directory";
        case 22: return "invalid argument";
        case 36: return "file name too long";
        case 40: return "too many levels of symbolic links";
        default: return "errno " + errno;
        }
    }

    private static byte[] cString(String what, String s) {
        if (s.indexOf('\0') >= 0)
            throw new IllegalArgumentException(what + " contains a NUL character");
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Sets (value non-null) or unsets an environment variable of the process. */
    static void setenv(String key, String value) throws IOException {
        if (key.isEmpty() || key.indexOf('=') >= 0)
            throw new IllegalArgumentException("invalid environment variable name \"" + key + "\"");
        byte[] k = cString("environment variable name", key);
        byte[] v = value == null ? null : cString("value of " + key, value);
        if (loaded) {
            int rc = setenv0(k, v);
            if (rc != 0)
                throw new IOException("cannot set environment variable " + key + ": " + errnoText(rc));
        }
        Map<String, String> view = envView();
        if (view != null) {
            if (value == null)
                view.remove(key);
            else
                view.put(key, value);
        }
    }

    // The mutable map behind System.getenv() (ProcessEnvironment's StringEnvironment, wrapped
    // unmodifiable). ProcessBuilder.environment() starts from a copy of it too.
    @SuppressWarnings("unchecked")
    private static synchronized Map<String, String> envView() {
        if (mutableEnv != null || envViewFailed)
            return mutableEnv;
        try {
            Map<String, String> env = System.getenv();
            Field m = env.getClass().getDeclaredField("m");
            m.setAccessible(true);
            mutableEnv = (Map<String, String>) m.get(env);
        } catch (ReflectiveOperationException | RuntimeException e) {
            envViewFailed = true;
            Driver.log("warning", "System.getenv() will not follow env layers: " + e);
        }
        return mutableEnv;
    }

    /** Changes the process's working directory and the JDK's idea of it. */
    static String chdir(String path) throws IOException {
        if (!loaded)
            throw new IOException("cannot change the working directory: the driver's native "
                    + "library is not available (" + loadError + ")");
        File target = new File(path);
        if (!target.isAbsolute())
            target = new File(cwd(), path);
        int rc = chdir0(cString("directory", target.getPath()));
        if (rc != 0)
            throw new IOException("cannot change directory to " + target + ": " + errnoText(rc));
        String now = cwd();
        syncJavaCwd(now);
        return now;
    }

    /** The working directory, from the process when possible. */
    static String cwd() {
        if (loaded) {
            byte[] b = getcwd0();
            if (b != null)
                return new String(b, StandardCharsets.UTF_8);
        }
        return System.getProperty("user.dir");
    }

    private static boolean cwdViewWarned;

    // java.io.File resolves relative paths against a copy of user.dir taken at startup, and
    // java.nio against its own; both are updated so getAbsolutePath() and toAbsolutePath() agree
    // with what open() does.
    static void syncJavaCwd(String dir) {
        System.setProperty("user.dir", dir);
        StringBuilder failures = new StringBuilder();
        try {
            // "fs" in JDK 17, "FS" in later ones: found by its type.
            Field fsField = null;
            for (Field f : File.class.getDeclaredFields()) {
                if (java.lang.reflect.Modifier.isStatic(f.getModifiers())
                        && f.getType().getName().equals("java.io.FileSystem"))
                    fsField = f;
            }
            if (fsField == null)
                throw new NoSuchFieldException("java.io.File's FileSystem");
            fsField.setAccessible(true);
            Object fs = fsField.get(null);
            Field userDir = fs.getClass().getDeclaredField("userDir");
            userDir.setAccessible(true);
            userDir.set(fs, dir);
        } catch (ReflectiveOperationException | RuntimeException e) {
            failures.append(" java.io: ").append(e);
        }
        try {
            Object fs = FileSystems.getDefault();
            Class<?> k = fs.getClass();
            Field field = null;
            while (k != null && field == null) {
                try {
                    field = k.getDeclaredField("defaultDirectory");
                } catch (NoSuchFieldException e) {
                    k = k.getSuperclass();
                }
            }
            if (field == null)
                throw new NoSuchFieldException("defaultDirectory");
            field.setAccessible(true);
            field.set(fs, dir.getBytes(StandardCharsets.UTF_8));
        } catch (ReflectiveOperationException | RuntimeException e) {
            failures.append(" java.nio: ").append(e);
        }
        if (failures.length() > 0 && !cwdViewWarned) {
            cwdViewWarned = true;
            Driver.log("warning", "absolute paths of relative files may show the old working "
                    + "directory:" + failures);
        }
    }
}
