package io.nvmf4j.spdk;

import io.nvmf4j.engine.Engine;
import io.nvmf4j.engine.EngineProvider;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.engine.LiveDocument;
import io.nvmf4j.rdma.NativeLibraryLoader;

import java.io.IOException;
import java.nio.file.Path;

/** Registers the spdk engine with {@link Engines} (META-INF/services). */
public final class SpdkEngineProvider implements EngineProvider {
    @Override
    public String name() {
        return Engines.SPDK;
    }

    @Override
    public String unavailabilityCause() {
        return SpdkNative.unavailabilityCause();
    }

    @Override
    public String runsOn() {
        return "lib" + SpdkNative.NAME + " for " + NativeLibraryLoader.arch() + " (" + Spdk.version() + ")";
    }

    @Override
    public Engine start(LiveDocument document, IoObserver observer, Path stateDir) throws IOException {
        return SpdkEngine.start(document, stateDir);
    }
}
