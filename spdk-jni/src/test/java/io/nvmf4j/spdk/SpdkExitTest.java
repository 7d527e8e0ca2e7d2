package io.nvmf4j.spdk;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A JVM that exits with the spdk engine still running ({@link ExitWithSpdkRunning}, in a child JVM working in a
 * temporary directory): the library's exit handler stops SPDK before the C library's exit runs the destructors
 * that unmap DPDK's memory, so the JVM exits with its own status, without a native crash, a crash report
 * (hs_err_pid*.log) or a core file.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpdkExitTest {
    private static final long EXIT_TIMEOUT_S = 60;

    @TempDir
    Path dir;

    @BeforeAll
    static void requireSpdk() {
        SpdkTools.assumeBuilt();
    }

    @Test
    void systemExitWithSpdkRunningStopsSpdkFirstAndKeepsTheStatus() throws Exception {
        String out = runChild("exit", ExitWithSpdkRunning.EXIT_STATUS);
        assertThat(out).contains("nvmf4j_spdk: SPDK stopped (exit status 0)");
    }

    /** The main thread ends with an OutOfMemoryError: the JVM exits with 1 as it does for any uncaught exception. */
    @Test
    void anOutOfMemoryErrorEndingTheJvmWithSpdkRunningStopsSpdkFirst() throws Exception {
        String out = runChild("oom", 1);
        assertThat(out).contains("java.lang.OutOfMemoryError: Java heap space")
            .contains("nvmf4j_spdk: SPDK stopped (exit status 0)");
    }

    /**
     * Control calls racing the engine's stop on four threads (three runs): each call answers or is refused ("SPDK is
     * not running"); none is sent to an app thread the stop is tearing down, so the JVM neither crashes nor hangs.
     */
    @Test
    void controlCallsRacingTheStopAreAnsweredOrRefused() throws Exception {
        for (int run = 0; run < 3; run++) {
            String out = runChild("calls", 0);
            out.lines().filter(l -> l.startsWith("calls answered")).forEach(l -> System.out.println("SpdkExitTest: " + l));
            assertThat(out).contains("engine closed while " + ExitWithSpdkRunning.CALLERS + " threads made calls")
                .containsPattern("calls answered: [1-9][0-9]*, refused: [0-9]+");
        }
    }

    /** Runs the child to its end; its output, after checking its status and that it did not crash. */
    private String runChild(String mode, int expectedStatus) throws IOException, InterruptedException {
        Path log = dir.resolve("child.log");
        Process p = ChildJvm.run(ExitWithSpdkRunning.class, "96m", dir, log, EXIT_TIMEOUT_S, mode);
        String out = Files.readString(log, StandardCharsets.UTF_8);
        assertThat(out).as("the engine ran").contains("engine running");
        assertThat(out).as("no native crash").doesNotContain("A fatal error has been detected");
        assertThat(p.exitValue()).as("exit status; output:%n%s", out).isEqualTo(expectedStatus);
        try (var files = Files.list(dir)) {
            assertThat(files.map(f -> f.getFileName().toString()))
                .as("crash reports and core files in the working directory")
                .noneMatch(n -> n.startsWith("hs_err_pid") || n.equals("core") || n.startsWith("core."));
        }
        return out;
    }
}
