package io.nvmf4j.it;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.OpenFiles;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The open-files check an engine start makes: what a configuration needs (the process, file and rbd bdevs, the
 * connections its listeners allow), refused when what it opens at start exceeds the limit, a WARN line when the
 * connections would, and the limit read from this process as /proc/self/limits states it.
 */
class OpenFilesTest {
    @Test
    void theLimitIsThisProcesssAsProcSelfLimitsSaysIt() throws Exception {
        String line = Files.readAllLines(Path.of("/proc/self/limits")).stream()
            .filter(l -> l.startsWith("Max open files")).findFirst().orElseThrow();
        String soft = line.substring("Max open files".length()).strip().split("\\s+")[0];
        assertThat(OpenFiles.limit()).isEqualTo(soft.equals("unlimited") ? Long.MAX_VALUE : Long.parseLong(soft));
    }

    @Test
    void aConfigurationNeedsTheProcessItsFileAndRbdBdevsAndItsListenersConnections() throws Exception {
        TargetConfig c = TestTarget.config(FreePorts.pick());
        int port = c.subsystems.get(0).listeners.get(0).port;
        c.subsystems.get(1).listeners.add(new ListenerConfig("tcp", TestTarget.ADDRESS, port)); // the same, once
        c.subsystems.get(1).listeners.add(new ListenerConfig("tcp", TestTarget.ADDRESS, port + 1));
        c.tcp.maxConnectionsPerListener = 1000;
        for (int i = 0; i < 100; i++) {
            c.bdevs.add(new BdevConfig("f" + i, "file", 512, 2048));
        }
        long before = OpenFiles.of(TestTarget.config(1)).files();
        OpenFiles.Need need = OpenFiles.of(c);
        assertThat(need.files()).isEqualTo(before + 100);
        assertThat(need.connections()).as("two listeners").isEqualTo(2000);
        assertThat(need.total()).isEqualTo(OpenFiles.BASE + before + 100 + 2000);

        long atStart = need.atStart();
        assertThatThrownBy(() -> OpenFiles.check(c, atStart - 1)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("open files: the bdevs and volumes need " + atStart + " descriptors")
            .hasMessageContaining("above the limit of " + (atStart - 1) + " (RLIMIT_NOFILE; systemd: LimitNOFILE)");
        try (LogCapture log = new LogCapture("io.nvmf4j.engine.OpenFiles")) {
            OpenFiles.check(c, atStart);
            assertThat(log.lines("connections beyond the limit fail at accept")).as("WARN below the total")
                .hasSize(1);
            OpenFiles.check(c, need.total());
            assertThat(log.lines("open files: limit " + need.total() + ", the configuration may need")).hasSize(1);
        }
    }

    /**
     * What the engine holds from its start counts with what it opens at start (the spdk engine: one descriptor per
     * 2 MiB hugepage of its memory, 4,096 at 8,192 MiB): refused below it, as the bdevs are.
     */
    @Test
    void whatTheEngineHoldsFromItsStartIsCounted() throws Exception {
        TargetConfig c = TestTarget.config(FreePorts.pick());
        OpenFiles.Need plain = OpenFiles.of(c);
        OpenFiles.Need held = OpenFiles.of(c, 4096);
        assertThat(held.atStart()).isEqualTo(plain.atStart() + 4096);
        assertThat(held.total()).isEqualTo(plain.total() + 4096);
        assertThat(held.toString()).contains("+ 4096 held by the engine +");
        assertThatThrownBy(() -> OpenFiles.check(c, held.atStart() - 1, 4096)).isInstanceOf(ConfigException.class)
            .hasMessageContaining("need " + held.atStart() + " descriptors (" + OpenFiles.BASE
                + " for the process + 4096 held by the engine itself + " + plain.files() + ")");
        try (LogCapture log = new LogCapture("io.nvmf4j.engine.OpenFiles")) {
            OpenFiles.check(c, held.total(), 4096);
            assertThat(log.lines("open files: limit " + held.total() + ", the configuration may need")).hasSize(1);
        }
    }

    /**
     * The unit's LimitNOFILE holds the published envelope: 10,000 namespaces on file bdevs and 2,000 controllers
     * of an admin and 8 I/O queues each, over 8 listeners of 4,096 connections (the default).
     */
    @Test
    void theUnitsLimitHoldsTenThousandFileNamespacesAndTwoThousandControllers() throws Exception {
        Path unit = Path.of(System.getProperty("user.dir")).getParent().resolve("dpu-profile/src/systemd/nvmf4j.service");
        long limit = Files.readAllLines(unit).stream().filter(l -> l.startsWith("LimitNOFILE="))
            .mapToLong(l -> Long.parseLong(l.substring("LimitNOFILE=".length()))).findFirst().orElseThrow();
        long envelope = OpenFiles.BASE + 10_000 + 2_000L * (1 + 8);
        assertThat(envelope).as("8 listeners of 4,096 hold the 18,000 connections").isLessThanOrEqualTo(8 * 4096);
        assertThat(limit).as("LimitNOFILE of %s", unit)
            .isGreaterThanOrEqualTo(OpenFiles.BASE + 10_000 + 8 * 4096L);
    }
}
