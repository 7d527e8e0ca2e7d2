package io.nvmf4j.spdk;

import io.nvmf4j.engine.Engines;
import org.junit.jupiter.api.BeforeAll;

/** {@link NvmeFuzzContract} against the spdk engine. */
class NvmeFuzzSpdkEngineTest extends NvmeFuzzContract {
    @BeforeAll
    static void start() throws Exception {
        SpdkTools.assumeBuilt();
        engine = start(Engines.SPDK);
    }
}
