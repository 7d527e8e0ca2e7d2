package io.nvmf4j.spdk;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A main class of spdk-jni's tests run in a JVM of its own (SPDK starts once per process), working in a directory,
 * its output (stdout and stderr) in a file.
 */
final class ChildJvm {
    private ChildJvm() {
    }

    /**
     * Runs {@code main} with {@code args} in {@code dir} until it ends (asserted within {@code timeoutSeconds}; it is
     * killed otherwise) and returns the ended process.
     */
    static Process run(Class<?> main, String heap, Path dir, Path log, long timeoutSeconds, String... args)
        throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-XX:+UseSerialGC", "-Xmx" + heap, "-cp", classesOf(main) + File.pathSeparator
                + System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
            .redirectOutput(log.toFile()).start();
        try {
            assertThat(p.waitFor(timeoutSeconds, TimeUnit.SECONDS)).as("%s %s ended within %d s", main.getSimpleName(),
                List.of(args), timeoutSeconds).isTrue();
        } finally {
            p.destroyForcibly();
        }
        return p;
    }

    /** Where {@code c} was loaded from (spdk-jni's test classes). */
    private static String classesOf(Class<?> c) {
        try {
            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
