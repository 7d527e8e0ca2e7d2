package io.nvmf4j.spdk;

import io.nvmf4j.engine.Engines;
import org.junit.jupiter.api.BeforeAll;

/** The engine contract against the java engine ({@link io.nvmf4j.javaengine.JavaEngine}). */
class JavaEngineContractTest extends EngineContract {
    @BeforeAll
    static void start() throws Exception {
        target = EngineTarget.start(Engines.JAVA);
    }

    @Override
    boolean listsTheDiscoverySubsystemOnEveryListener() {
        return false;
    }

    @Override
    boolean servesFirstNumBlocksOfALongerFile() {
        return true;
    }
}
