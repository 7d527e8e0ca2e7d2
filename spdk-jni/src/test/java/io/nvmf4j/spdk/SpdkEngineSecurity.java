package io.nvmf4j.spdk;

import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.Engine;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.security.SecureRandom;

/**
 * What the spdk engine's security tests ({@link SpdkEngineAuthTest}, {@link SpdkEngineTlsTest}) share: one spdk
 * engine for the class (SPDK starts once per JVM), key files in a temporary directory, and a bystander: a plain host
 * without keys on the open subsystem, connected for the whole class, which must carry on doing I/O whatever the
 * hosts under test do.
 */
abstract class SpdkEngineSecurity {
    @TempDir
    static Path dir;
    static ConfigController<Engine> engine;
    static NvmeController bystander;
    static final SecureRandom RANDOM = new SecureRandom();

    /** The bystander's keep-alive timeout: longer than a class runs, as the test host sends no Keep Alive of its own. */
    static final int BYSTANDER_KATO_MS = 600_000;

    /** Starts the spdk engine on {@code cfg} and connects the bystander as {@code hostnqn} to {@code port}. */
    static void startWith(TargetConfig cfg, int port, String hostnqn) throws Exception {
        engine = Engines.start(cfg, IoObserver.NONE);
        bystander = NvmeController.open(TestTarget.ADDRESS, port, TestTarget.SUBNQN, hostnqn, BYSTANDER_KATO_MS, 1,
            TcpHostOptions.DEFAULT);
    }

    @AfterAll
    static void stop() {
        if (bystander != null) {
            bystander.close();
        }
        if (engine != null) {
            engine.close();
        }
    }

    /** The bystander still writes and reads back (4 KiB at a block of its own for each {@code seed}). */
    static void assertBystanderCarriesOn(long seed) {
        TestData.assertWriteReadBack(bystander.io(0), 1, 4000 + seed * 16, 4096, seed);
    }
}
