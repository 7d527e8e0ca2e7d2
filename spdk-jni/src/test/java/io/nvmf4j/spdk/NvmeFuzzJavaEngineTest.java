package io.nvmf4j.spdk;

import io.nvmf4j.engine.Engines;
import org.junit.jupiter.api.BeforeAll;

/** {@link NvmeFuzzContract} against the java engine. */
class NvmeFuzzJavaEngineTest extends NvmeFuzzContract {
    @BeforeAll
    static void start() throws Exception {
        engine = start(Engines.JAVA);
    }
}
