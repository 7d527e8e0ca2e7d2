package io.nvmf4j.transport.tcp;

import io.nvmf4j.testhost.FreePorts;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.javaengine.JavaEngine;

import java.io.IOException;

/**
 * A running test target with a controller's admin queue and one I/O queue on {@link EmbeddedChannel}s
 * ({@link CommandCostBenchmark#connectedQueues}), for tests that drive the NVMe/TCP queue without sockets.
 */
final class EmbeddedQueues implements AutoCloseable {
    final ConfigController<JavaEngine> nvmf;
    final EmbeddedChannel admin;
    final EmbeddedChannel io;

    private EmbeddedQueues(ConfigController<JavaEngine> nvmf, EmbeddedChannel[] queues) {
        this.nvmf = nvmf;
        this.admin = queues[0];
        this.io = queues[1];
    }

    /** The I/O queue's buffers from {@code ioAlloc}, its completions told to {@code ioObserver}. */
    static EmbeddedQueues start(ByteBufAllocator ioAlloc, IoObserver ioObserver) throws IOException {
        TargetConfig cfg = TestTarget.config(FreePorts.pick());
        ConfigController<JavaEngine> nvmf = JavaEngine.start(cfg);
        try {
            return new EmbeddedQueues(nvmf, CommandCostBenchmark.connectedQueues(nvmf, cfg, ioAlloc, ioObserver));
        } catch (RuntimeException e) {
            nvmf.close();
            throw e;
        }
    }

    /** Closes the I/O queue's channel (the connection goes down) and releases what it still holds. */
    void closeIo() {
        io.finishAndReleaseAll();
    }

    @Override
    public void close() {
        closeIo();
        admin.finishAndReleaseAll();
        nvmf.close();
    }
}
