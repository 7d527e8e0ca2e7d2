package io.nvmf4j.fuzz;

import io.nvmf4j.transport.rdma.RdmaParserFuzz;
import io.nvmf4j.transport.tcp.TcpPduFuzz;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The parser fuzz in the normal suite: a few thousand cases per parser from fixed base seeds (the base seeds
 * and tries below; CI replays exactly these), then one short run from a fresh seed (printed), whose escapes
 * each replay with {@code ./dev.sh fuzz --replay TARGET:SEED} from their ESCAPE line. The long run is
 * {@code ./dev.sh fuzz} ({@link ParserFuzz}).
 * Case {@code i}'s seed is {@link Tries#seed}(base, i); the case itself is built from it by the target (see
 * {@link FuzzTarget}). A failing case names its seed and the {@code ./dev.sh fuzz --replay} that runs it alone.
 */
class ParserFuzzTest {
    private static TcpPduFuzz tcp;
    private static Runnable restoreLogs = () -> { };
    private static final FuzzTarget SGL = new RdmaParserFuzz.Sgl();
    private static final FuzzTarget CM = new RdmaParserFuzz.CmPrivateData();
    private static final FuzzTarget CONFIG = new ConfigFuzz();
    private static final FuzzTarget AUTH = new io.nvmf4j.auth.AuthFuzz();

    @BeforeAll
    static void start() throws Exception {
        restoreLogs = ParserFuzz.quietLogs();
        tcp = new TcpPduFuzz();
    }

    @AfterAll
    static void stop() {
        try {
            if (tcp != null) {
                tcp.checkStillServes();
                tcp.close();
            }
        } finally {
            restoreLogs.run();
        }
    }

    @Test
    void tcpPdusNeverEscape() {
        check(tcp, "tcpPdusNeverEscape", 4420, 3000);
    }

    @Test
    void rdmaSglsNeverEscape() {
        check(SGL, "rdmaSglsNeverEscape", 4791, 20000);
    }

    @Test
    void rdmaCmPrivateDataNeverEscapes() {
        check(CM, "rdmaCmPrivateDataNeverEscapes", 4791, 5000);
    }

    @Test
    void configDocumentsNeverEscape() {
        check(CONFIG, "configDocumentsNeverEscape", 8009, 3000);
    }

    @Test
    void authMessagesNeverEscape() {
        check(AUTH, "authMessagesNeverEscape", 2817, 1000);
    }

    /** {@code tries} cases of {@code target} from {@code base}; a failing one names its replay command. */
    private static void check(FuzzTarget target, String property, long base, int tries) {
        Tries.of(property, base, tries).replay(s -> "./dev.sh fuzz --replay " + target.name() + ":" + s)
            .forEachSeed(target::run);
    }

    /** A fresh seed each run (printed), through the long run's own loop, watchdog and health check. */
    @Test
    void freshSeedRun() {
        long seed = System.nanoTime();
        // this run gives the parsers their cases in turn; ./dev.sh fuzz --seed shares them out by the time each has
        // used, so it runs other cases: one case replays exactly with the TARGET:SEED of its ESCAPE line
        System.out.println("ParserFuzzTest: fresh seed " + seed + " (replay a case: ./dev.sh fuzz --replay TARGET:SEED"
            + " from its ESCAPE line)");
        ParserFuzz.Result r = ParserFuzz.run(List.of(tcp, SGL, CM, CONFIG, AUTH), 4000, seed, System.out);
        assertThat(r.firstEscapes()).as("escapes from seed %d (replay one: ./dev.sh fuzz --replay TARGET:SEED)", seed)
            .isEmpty();
        assertThat(r.hangs()).as("hangs from seed %d", seed).isZero();
        assertThat(r.cases()).isEqualTo(4000);
    }
}
