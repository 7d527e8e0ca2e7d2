package io.nvmf4j.service.api;

import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.engine.ListenerState;

/**
 * A listener as the API shows it: as configured ({@code transport}, {@code address}, {@code port}: the key for
 * DELETE, 0 stays 0) plus what it does now: {@code state} {@code listening} with {@code boundPort} (the port
 * hosts connect to; the port picked for a port-0 listener), or {@code failed} with {@code cause} and no bound
 * port. A plain Jackson-serialisable class.
 */
@Views.Answer
public final class ListenerView {
    public String transport;
    public String address;
    public int port;
    /** NVMe/TCP secure channel: {@code none}, {@code optional} or {@code required} (TLS 1.3 with a PSK). */
    public String secureChannel;
    /** The port actually bound; null when not listening. */
    @Views.Nullable
    public Integer boundPort;
    /** {@code listening} or {@code failed}. */
    public String state;
    /** Why a failed listener does not serve; null when listening. */
    @Views.Nullable
    public String cause;

    public ListenerView() {
    }

    static ListenerView of(ListenerConfig l, ListenerState s) {
        ListenerView v = new ListenerView();
        v.transport = l.transport;
        v.address = l.address;
        v.port = l.port;
        v.secureChannel = l.secureChannelOrDefault();
        ListenerState state = s == null ? ListenerState.failed("not bound") : s;
        v.boundPort = state.boundPort();
        v.state = state.state();
        v.cause = state.cause();
        return v;
    }
}
