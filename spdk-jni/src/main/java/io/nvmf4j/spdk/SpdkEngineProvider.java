package io.nvmf4j.spdk;

import io.nvmf4j.config.TargetConfig;
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

    /**
     * DPDK keeps the hugetlbfs file of each 2 MiB page of SPDK's memory open: one descriptor per page of
     * {@code spdk.memSizeMb} (measured with fio-jobs/scale.py: 597 descriptors at 1,024 MiB and 4,181 at 8,192, before
     * any connection); none without hugepages.
     */
    @Override
    public long descriptorsAtStart(TargetConfig config) {
        return pagesOf(config);
    }

    static long pagesOf(TargetConfig config) {
        return config.spdk.hugepages ? (config.spdk.memSizeMb + 1L) / 2 : 0;
    }

    @Override
    public Engine start(LiveDocument document, IoObserver observer, Path stateDir) throws IOException {
        return SpdkEngine.start(document, stateDir);
    }
}
