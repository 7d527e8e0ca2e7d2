package io.nvmf4j.spdk;

import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.Engine;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SPDK's {@code nvme_fuzz} (random admin and I/O commands on the valid namespaces, fixed seed) against an engine
 * over NVMe/TCP loopback: the fuzzer finishes, the target answered many thousand commands, and afterwards a
 * well-behaved host still connects and reads back what it wrote. One subclass per engine, each in a JVM of its
 * own (spdk-jni's surefire forks per class). Against the spdk engine this found SPDK v26.05 dereferencing NULL
 * for a refused Reservation Acquire (preempt-and-abort), fixed by spdk-patches/0001.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
abstract class NvmeFuzzContract {
    static final int FUZZ_SECONDS = 10;
    static final int SEED = 20261201;

    static ConfigController<Engine> engine;

    /**
     * The standard loopback document cut down to the open subsystem with one namespace: nvme_fuzz -N does not
     * finish against a subsystem whose nsids have a gap (1 and 3), on either engine.
     */
    static ConfigController<Engine> start(String engineName) throws IOException {
        TargetConfig cfg = EngineTarget.document(engineName);
        cfg.subsystems.removeIf(s -> !s.nqn.equals(TestTarget.SUBNQN));
        cfg.subsystems.get(0).namespaces.removeIf(n -> n.nsid != 1);
        cfg.bdevs.removeIf(b -> cfg.subsystems.get(0).namespaces.stream().noneMatch(n -> n.bdev.equals(b.name)));
        return Engines.start(cfg, IoObserver.NONE);
    }

    @AfterAll
    static void stop() {
        if (engine != null) {
            engine.close();
            engine = null;
        }
    }

    private static int port() {
        return engine.listeners().values().iterator().next().getPort();
    }

    @Test
    void theTargetSurvivesNvmeFuzzAndStillServesAWellBehavedHost() throws Exception {
        SpdkTools.assumeBuilt();
        // nvme_fuzz's -F takes a transport ID without a host NQN (it connects as its own host)
        String trid = "trtype:TCP adrfam:IPv4 traddr:" + TestTarget.ADDRESS + " trsvcid:" + port()
            + " subnqn:" + TestTarget.SUBNQN;
        SpdkTools.Run run = SpdkTools.fuzz(trid, FUZZ_SECONDS, SEED);
        String summary = String.join("\n", run.kept());
        assertThat(run.exitCode()).as("nvme_fuzz exit status; its output ends:%n%s", tail(run.output())).isZero();
        assertThat(run.kept()).as("nvme_fuzz's summary lines").anyMatch(l -> l.startsWith("Fuzzing completed"));
        assertThat(completed(summary, "I/O qp")).as("I/O commands the target answered").isGreaterThan(1000);
        assertThat(completed(summary, "admin qp")).as("admin commands the target answered").isGreaterThan(100);

        try (NvmeController c = NvmeController.open(TestTarget.ADDRESS, port(), TestTarget.SUBNQN,
                TestTarget.HOSTNQN, TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            byte[] data = new byte[4096];
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) (i * 31 + 7);
            }
            assertThat(io.write(1, 1024, data).ok()).isTrue();
            Completion r = io.read(1, 1024, 8);
            assertThat(r.ok()).isTrue();
            assertThat(r.data()).isEqualTo(data);
        }
    }

    /** The sum of "Total commands completed: N" over the fuzzer's summary lines for that kind of queue. */
    private static long completed(String log, String queue) {
        Matcher m = Pattern.compile(Pattern.quote(queue) + ", Total commands completed: (\\d+)").matcher(log);
        long total = 0;
        while (m.find()) {
            total += Long.parseLong(m.group(1));
        }
        return total;
    }

    private static String tail(String log) {
        String[] lines = log.split("\n");
        return String.join("\n", Arrays.copyOfRange(lines, Math.max(0, lines.length - 20), lines.length));
    }
}
