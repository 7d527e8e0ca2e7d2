package io.nvmf4j.service.api;

import io.nvmf4j.fuzz.Tries;
import io.nvmf4j.service.api.Http.Res;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The REST body fuzz in the normal suite (issue 15): a few hundred mutated bodies over every mutating route with
 * a fixed base seed (the seed and tries below, case {@code i}'s seed {@link Tries#seed}(base, i); CI replays exactly
 * these), then a short run from a fresh seed, printed; a failing case replays with
 * {@code ./dev.sh fuzz --rest --replay SEED}. Each case: 2xx or 4xx with a JSON error
 * message, never 5xx or silence, and a refused request leaves the configuration (live and saved) as it was.
 * The long run is {@code ./dev.sh fuzz --rest} ({@link RestBodyFuzz#main}).
 */
class RestBodyFuzzTest {
    private static RestBodyFuzz fuzz;
    private static Path dir;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("nvmf4j-restfuzz");
        fuzz = new RestBodyFuzz(dir.resolve("state"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (fuzz != null) {
            try {
                assertThat(fuzz.stillServes()).as("the service after the fuzz").isNull();
            } finally {
                fuzz.close();
                try (var s = Files.walk(dir)) {
                    s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    /** The templates are valid: each is accepted as it is (else the fuzz would only ever test refusals). */
    @Test
    void everyTemplateIsAcceptedUnmutated() {
        for (RestBodyFuzz.Route r : fuzz.routes()) {
            Res res = fuzz.service().http.send(r.method(), r.path(), r.body(), "application/json");
            assertThat(res.status()).as("%s %s %s -> %s", r.method(), r.path(), r.body(), res).isBetween(200, 299);
            assertThat(fuzz.restore()).as("undoing %s %s", r.method(), r.path()).isNull();
        }
        assertThat(fuzz.stillServes()).isNull();
    }

    /**
     * Found by the fuzz (seed -1326028938713721326 of ./dev.sh fuzz --rest --seed 20261202): a subsystem whose
     * "namespaces" held a JSON null answered 500 (identities were assigned before validation and read the null).
     */
    @Test
    void aNullNamespaceEntryIsA400NotA500() {
        Res r = fuzz.service().http.post("/api/v1/subsystems", "{\"nqn\":\"nqn.2026-11.io.nvmf4j:fz-null\","
            + "\"namespaces\":[null]}");
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        assertThat(r.error()).isEqualTo("namespaces[0]: null entry");
        assertThat(fuzz.runCase(-1326028938713721326L).ok()).as("the fuzz case itself").isTrue();
        assertThat(fuzz.stillServes()).isNull();
    }

    /**
     * Cases the fuzz found (CI's fresh seed 33545886493230 and ./dev.sh fuzz --rest --seed 20261203): an accepted
     * document that dropped e0 made the harness's undo fail (it cleared e0's injections before putting the
     * document back), an import put the bdevs back in another order, a refused import undone put them back in
     * another order, and an import did not put the RDMA settings back (see ConfigImportTest).
     */
    @Test
    void foundCasesPass() {
        for (long seed : new long[] {3504604729062765688L, -2418598554171413449L, -3590731011370978634L,
            -5882953080853560722L}) {
            RestBodyFuzz.Outcome o = fuzz.runCase(seed);
            assertThat(o.problem()).as("case %d: %s -> %d", seed, o.route(), o.status()).isNull();
        }
        assertThat(fuzz.stillServes()).isNull();
    }

    @Test
    void mutatedBodiesGetA4xxWithAMessageAndChangeNothing() {
        Tries.of("mutatedBodiesGetA4xxWithAMessageAndChangeNothing", 1521, 200)
            .replay(s -> "./dev.sh fuzz --rest --replay " + s)
            .forEachSeed(seed -> {
                RestBodyFuzz.Outcome o = fuzz.runCase(seed);
                assertThat(o.problem()).as("case %d: %s -> %d", seed, o.route(), o.status()).isNull();
            });
    }

    /** A fresh seed each run (printed), through the long run's loop and its final health check. */
    @Test
    void freshSeedRun() {
        long seed = System.nanoTime();
        System.out.println("RestBodyFuzzTest: fresh seed " + seed + " (replay: ./dev.sh fuzz --rest --seed " + seed
            + " --cases 150)");
        RestBodyFuzz.Result r = fuzz.run(150, seed, System.out);
        assertThat(r.failures()).as("failures from seed %d", seed).isEmpty();
        assertThat(r.refused()).as("cases refused with a 4xx").isGreaterThan(50);
    }
}
