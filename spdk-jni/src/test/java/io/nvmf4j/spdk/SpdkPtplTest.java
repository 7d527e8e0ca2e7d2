package io.nvmf4j.spdk;

import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.Engines;
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
 * Persist Through Power Loss on the spdk engine, through SPDK's own file ({@link PtplRestartChild}, one JVM per run):
 * the namespace reports the PTPL capability, a registration and a reservation made with PTPL on are there again
 * after a restart of the engine (on a RAM bdev: the reservation is kept, not the data), and the file goes with the
 * namespace.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpdkPtplTest {
    private static final long RUN_TIMEOUT_S = 90;

    @TempDir
    Path dir;

    @BeforeAll
    static void requireSpdk() {
        SpdkTools.assumeBuilt();
    }

    @Test
    void aReservationMadeWithPtplOnSurvivesARestartAndGoesWithTheNamespace() throws Exception {
        TargetConfig cfg = EngineTarget.document(Engines.SPDK);
        Path doc = dir.resolve("config.json");
        Path state = Files.createDirectories(dir.resolve("state"));
        ConfigStore.assignIdentities(cfg);
        Files.writeString(doc, ConfigStore.toJson(cfg), StandardCharsets.UTF_8);

        String registered = run("register", doc, state);
        assertThat(registered).as("RESCAP bit 0 (Persist Through Power Loss capable)").containsPattern("rescap=\\d*[13579]\\b")
            .contains("register with ptpl: true", "acquire write exclusive: true", "ptpl file there: true");

        String reported = run("report", doc, state);
        assertThat(reported).as("after a restart of the engine")
            .contains("report: ok=true rtype=1 regctl=1 ptpls=1 rkey=" + Long.toHexString(PtplRestartChild.KEY));

        String removed = run("remove", doc, state);
        assertThat(removed).contains("namespace removed", "ptpl file there: false");
    }

    /** Runs the child to its end; its output, after checking that it exited with 0. */
    private String run(String phase, Path doc, Path state) throws IOException, InterruptedException {
        Path log = dir.resolve(phase + ".log");
        Process p = ChildJvm.run(PtplRestartChild.class, "256m", dir, log, RUN_TIMEOUT_S, phase, doc.toString(),
            state.toString());
        String out = Files.readString(log, StandardCharsets.UTF_8);
        System.out.print(out.lines().filter(l -> !l.contains(" INFO ")).reduce("", (a, b) -> a + b + "\n"));
        assertThat(p.exitValue()).as("%s's exit status; output:%n%s", phase, out).isZero();
        return out;
    }
}
