package io.nvmf4j.transport;

import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.core.TransportLimits;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * One running transport of the java engine, modelled on Linux nvmet's {@code nvmet_fabrics_ops}: the
 * control plane adds and removes ports ({@code add_port} / {@code remove_port}) and stops the whole
 * transport; everything per queue (receiving capsules, moving data, sending responses) stays inside the
 * transport. The engine finds a transport through its registry by its {@link TransportType}, never by
 * comparing transport names.
 */
public interface Transport extends AutoCloseable {
    /** What kind of transport this is (its name, discovery-log fields). */
    TransportType type();

    /** Limits advertised to hosts on queues of this transport (Identify Controller, ICResp, CM reply). */
    TransportLimits limits();

    /**
     * Binds a listener (idempotent; {@code add_port}); returns the bound address, or null when this
     * transport cannot work on this host ({@link #unavailability()} says why; the target carries on).
     */
    InetSocketAddress listen(ListenerConfig listener) throws IOException;

    /** Stops accepting on a listener; connected queues stay ({@code remove_port}). */
    void stopListening(ListenerConfig listener);

    /** Null when the transport works here, else why not (one line). */
    default String unavailability() {
        return null;
    }

    /** Stops every listener. */
    @Override
    void close();
}
