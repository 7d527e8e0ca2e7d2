package io.nvmf4j.spdk.fuzz;

import io.nvmf4j.core.IoObserver;
import io.nvmf4j.engine.Engines;
import org.junit.jupiter.api.BeforeAll;

/** {@link NvmeFuzzContract} against the java engine. */
class NvmeFuzzJavaEngineTest extends NvmeFuzzContract {
    @BeforeAll
    static void start() throws Exception {
        engine = Engines.start(config(Engines.JAVA), IoObserver.NONE);
    }
}
