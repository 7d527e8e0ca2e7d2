package io.nvmf4j.fuzz;

import io.nvmf4j.transport.rdma.RdmaParserFuzz;
import io.nvmf4j.transport.tcp.TcpPduFuzz;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The parser fuzz in the normal suite: a few thousand cases per parser with fixed seeds (jqwik's seed
 * and tries below; CI replays exactly these), then one short run from a fresh seed (printed), whose escapes
 * each replay with {@code ./dev.sh fuzz --replay TARGET:SEED} from their ESCAPE line. The long run is
 * {@code ./dev.sh fuzz} ({@link ParserFuzz}).
 * A case's seed comes from jqwik; the case itself is built from it by the target (see {@link FuzzTarget}).
 */
class ParserFuzzTest {
    private static TcpPduFuzz tcp;
    private static final FuzzTarget SGL = new RdmaParserFuzz.Sgl();
    private static final FuzzTarget CM = new RdmaParserFuzz.CmPrivateData();
    private static final FuzzTarget CONFIG = new ConfigFuzz();
    private static final FuzzTarget AUTH = new io.nvmf4j.auth.AuthFuzz();

    @BeforeContainer
    static void start() throws Exception {
        ParserFuzz.quietLogs();
        tcp = new TcpPduFuzz();
    }

    @AfterContainer
    static void stop() {
        if (tcp != null) {
            tcp.checkStillServes();
            tcp.close();
        }
    }

    @Property(tries = 3000, seed = "4420")
    void tcpPdusNeverEscape(@ForAll long seed) {
        tcp.run(seed);
    }

    @Property(tries = 20000, seed = "4791")
    void rdmaSglsNeverEscape(@ForAll long seed) {
        SGL.run(seed);
    }

    @Property(tries = 5000, seed = "4791")
    void rdmaCmPrivateDataNeverEscapes(@ForAll long seed) {
        CM.run(seed);
    }

    @Property(tries = 3000, seed = "8009")
    void configDocumentsNeverEscape(@ForAll long seed) {
        CONFIG.run(seed);
    }

    @Property(tries = 1000, seed = "2817")
    void authMessagesNeverEscape(@ForAll long seed) {
        AUTH.run(seed);
    }

    /** A fresh seed each run (printed), through the long run's own loop, watchdog and health check. */
    @Property(tries = 1)
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
