package io.nvmf4j.spdk.fuzz;

import io.nvmf4j.core.IoObserver;
import io.nvmf4j.engine.Engines;
import org.junit.jupiter.api.BeforeAll;

/** {@link NvmeFuzzContract} against the spdk engine. */
class NvmeFuzzSpdkEngineTest extends NvmeFuzzContract {
    @BeforeAll
    static void start() throws Exception {
        spdkTree();
        engine = Engines.start(config(Engines.SPDK), IoObserver.NONE);
    }
}
