package io.nvmf4j.service;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The service launcher ({@code Main}, or a test's variant of it) as a child JVM: {@code Main} blocks until SIGTERM and
 * calls System.exit, so it cannot run inside the test JVM. Its merged stdout/stderr go to a file: Process.destroy()
 * closes the pipes, which would lose what the service logs while it shuts down.
 */
final class ServiceProcess {
    /** How long {@link #awaitLine(Predicate)} and {@link #awaitExit()} wait. */
    static final long TIMEOUT_MS = 15_000;

    final Process process;
    private final Path log;

    private ServiceProcess(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    /** {@code Main} with {@code args} in a JVM of 256 MiB heap, working in {@code dir}, its output in {@code log}. */
    static ServiceProcess start(Path dir, Path log, String... args) throws IOException {
        return start(Main.class, "-Xmx256m", dir, log, args);
    }

    /**
     * {@code main} with {@code args} in a child JVM with heap option {@code xmx}, working in {@code dir} (where the JVM
     * writes a crash report or a core file if it crashes), its output in {@code log}, logging at INFO.
     */
    static ServiceProcess start(Class<?> main, String xmx, Path dir, Path log, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", xmx,
            "-cp", classesDir() + File.pathSeparator + System.getProperty("java.class.path"),
            main.getName()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile())
            .directory(dir.toFile());
        pb.environment().put("NVMF4J_LOG_LEVEL", "INFO");
        return new ServiceProcess(pb.start(), log);
    }

    /**
     * A document for a child service: one core, the API off, bdev m0 (malloc, 16384 blocks of 512 bytes) and
     * subsystem {@code nqn}, which admits any host, with namespace 1 on m0, listening on TCP 127.0.0.1:{@code port}.
     */
    static TargetConfig document(String nqn, int port) {
        TargetConfig c = new TargetConfig();
        c.cores = 1;
        c.api.port = 0;
        c.bdevs.add(new BdevConfig("m0", "malloc", 512, 16384));
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = nqn;
        s.allowAnyHost = true;
        s.namespaces.add(new NamespaceConfig(1, "m0"));
        s.listeners.add(new ListenerConfig("tcp", "127.0.0.1", port));
        c.subsystems.add(s);
        return c;
    }

    /** The line the service logs once its API serves on {@code port}, the token being in document {@code config}. */
    static String apiLine(int port, Path config) {
        return "management API on http://127.0.0.1:" + port + " (token in api.token of " + config + ")";
    }

    /** mgmt-api's own classes (target/classes), where Main was loaded from. */
    private static String classesDir() {
        try {
            return Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@link #awaitLine(Predicate, long)} for {@link #TIMEOUT_MS}. */
    boolean awaitLine(Predicate<String> p) throws InterruptedException {
        return awaitLine(p, TIMEOUT_MS);
    }

    /** Waits until a line of the output matches or the process has exited; whether a line matched. */
    boolean awaitLine(Predicate<String> p, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true) {
            boolean exited = !process.isAlive();
            if (output().lines().anyMatch(p)) {
                return true;
            }
            if (exited || System.nanoTime() > deadline) {
                return false;
            }
            process.waitFor(20, TimeUnit.MILLISECONDS);  // poll interval; returns early on exit
        }
    }

    /** Waits for the process to exit; its exit code. */
    int awaitExit() throws InterruptedException {
        if (!process.waitFor(TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
            throw new AssertionError("still running after " + TIMEOUT_MS + " ms; output:\n" + output());
        }
        return process.exitValue();
    }

    /** SIGKILL, and waits until the process is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    String output() {
        try {
            return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
