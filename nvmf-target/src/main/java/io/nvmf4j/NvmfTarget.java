package io.nvmf4j;

import io.nvmf4j.config.TargetConfig;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;

/** A running target: poll groups, block devices, subsystems and bound listeners. (stub, being written) */
public final class NvmfTarget implements AutoCloseable {
    /** Opens the block devices, builds the subsystems and binds every listener. */
    public static NvmfTarget start(TargetConfig config) throws IOException {
        throw new UnsupportedOperationException("being written");
    }

    /** The TCP addresses actually bound, in config order (port 0 in config gives the ephemeral port here). */
    public List<InetSocketAddress> tcpListenAddresses() {
        throw new UnsupportedOperationException("being written");
    }

    /** Disconnects every host, flushes the block devices and releases threads and sockets. */
    @Override
    public void close() {
    }
}
