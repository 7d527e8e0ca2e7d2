package io.nvmf4j.rdma;

import java.net.Inet6Address;
import java.net.InetAddress;

/**
 * librdmacm: event channels and CM ids. Every call takes and returns handles ({@code long});
 * failures come back as a negative errno, never as an exception, except where noted.
 *
 * <p>Passive side: {@link #createEventChannel} → {@link #createId} → {@link #bind} →
 * {@link #listen}; then per CONNECT_REQUEST event: create a QP on the event's id
 * ({@link Verbs#createQp}), post receives, {@link #accept} (or {@link #reject}), ack the event;
 * ESTABLISHED; eventually DISCONNECTED → {@link #disconnect}, {@link Verbs#destroyQp},
 * {@link #destroyId}. Active side (tests, tools): {@link #resolveAddr} → ADDR_RESOLVED →
 * {@link #resolveRoute} → ROUTE_RESOLVED → QP → {@link #connect} → ESTABLISHED.
 */
public final class RdmaCm {
    static {
        Rdma.ensureLibraryLoaded();
    }

    /** {@code RDMA_PS_TCP}: reliable connected, the port space nvme-rdma uses. */
    public static final int PS_TCP = Layout.intValue("cm.ps_tcp");

    public static final int EVENT_ADDR_RESOLVED = Layout.intValue("cm.event.ADDR_RESOLVED");
    public static final int EVENT_ADDR_ERROR = Layout.intValue("cm.event.ADDR_ERROR");
    public static final int EVENT_ROUTE_RESOLVED = Layout.intValue("cm.event.ROUTE_RESOLVED");
    public static final int EVENT_ROUTE_ERROR = Layout.intValue("cm.event.ROUTE_ERROR");
    public static final int EVENT_CONNECT_REQUEST = Layout.intValue("cm.event.CONNECT_REQUEST");
    public static final int EVENT_CONNECT_RESPONSE = Layout.intValue("cm.event.CONNECT_RESPONSE");
    public static final int EVENT_CONNECT_ERROR = Layout.intValue("cm.event.CONNECT_ERROR");
    public static final int EVENT_UNREACHABLE = Layout.intValue("cm.event.UNREACHABLE");
    public static final int EVENT_REJECTED = Layout.intValue("cm.event.REJECTED");
    public static final int EVENT_ESTABLISHED = Layout.intValue("cm.event.ESTABLISHED");
    public static final int EVENT_DISCONNECTED = Layout.intValue("cm.event.DISCONNECTED");
    public static final int EVENT_DEVICE_REMOVAL = Layout.intValue("cm.event.DEVICE_REMOVAL");
    public static final int EVENT_ADDR_CHANGE = Layout.intValue("cm.event.ADDR_CHANGE");
    public static final int EVENT_TIMEWAIT_EXIT = Layout.intValue("cm.event.TIMEWAIT_EXIT");

    private RdmaCm() {
    }

    /** A new event channel (handle) or a negative errno; non-blocking makes {@link #getEvent} return -EAGAIN. */
    public static long createEventChannel(boolean nonBlocking) {
        return Native.createEventChannel(nonBlocking);
    }

    /** The channel's fd, for epoll / {@link Rdma#pollIn}. */
    public static int eventChannelFd(long channel) {
        return Native.eventChannelFd(channel);
    }

    public static int destroyEventChannel(long channel) {
        return Native.destroyEventChannel(channel);
    }

    /** A new CM id (handle) on the channel in {@code portSpace} ({@link #PS_TCP}), or a negative errno. */
    public static long createId(long channel, int portSpace) {
        return Native.createId(channel, portSpace);
    }

    /** Moves an id's future events to another channel (e.g. the owning poll group's). */
    public static int migrateId(long id, long channel) {
        return Native.migrateId(id, channel);
    }

    /** {@code rdma_bind_addr} to an IPv4 or IPv6 address (the wildcard address binds every device). */
    public static int bind(long id, InetAddress address, int port) {
        return Native.bindAddr(id, address.getAddress(), port, scopeId(address));
    }

    /** {@code rdma_resolve_addr} toward {@code address:port}; ADDR_RESOLVED or ADDR_ERROR follows. */
    public static int resolveAddr(long id, InetAddress address, int port, int timeoutMs) {
        return Native.resolveAddr(id, address.getAddress(), port, scopeId(address), timeoutMs);
    }

    /** {@code rdma_resolve_route}; ROUTE_RESOLVED or ROUTE_ERROR follows. */
    public static int resolveRoute(long id, int timeoutMs) {
        return Native.resolveRoute(id, timeoutMs);
    }

    public static int listen(long id, int backlog) {
        return Native.listen(id, backlog);
    }

    /** {@code rdma_connect} with private data (at most 255 bytes; null for none). */
    public static int connect(long id, byte[] privateData, int responderResources, int initiatorDepth,
            int retryCount, int rnrRetryCount) {
        return Native.connect(id, privateData, responderResources, initiatorDepth, retryCount, rnrRetryCount);
    }

    /**
     * {@code rdma_accept} of a CONNECT_REQUEST's id with private data (null for none).
     * {@code initiatorDepth} must be at least 1 and at most the event's initiator depth for this
     * side to issue RDMA READs.
     */
    public static int accept(long id, byte[] privateData, int responderResources, int initiatorDepth,
            int rnrRetryCount) {
        return Native.accept(id, privateData, responderResources, initiatorDepth, rnrRetryCount);
    }

    /**
     * As {@link #accept}, but this side moves the id's QP (from {@link Verbs#createQp}) to RTR and RTS
     * itself, with {@code rnrRetry} (0..7, 7 for ever) as its own QP's RNR retry count and as the
     * accept's rnr_retry_count: the IB CM would give this QP the host's count instead.
     */
    public static int acceptRts(long id, byte[] privateData, int responderResources, int initiatorDepth,
            int rnrRetry) {
        return Native.acceptRts(id, privateData, responderResources, initiatorDepth, rnrRetry);
    }

    /** {@code rdma_reject} with private data; then ack the event and destroy the id. */
    public static int reject(long id, byte[] privateData) {
        return Native.reject(id, privateData);
    }

    public static int disconnect(long id) {
        return Native.disconnect(id);
    }

    /** {@code rdma_destroy_id}; blocks until every event of the id has been acked. Destroy its QP first. */
    public static int destroyId(long id) {
        return Native.destroyId(id);
    }

    /** Takes the next event into {@code event} (blocks unless the channel is non-blocking: -EAGAIN). */
    public static int getEvent(long channel, CmEvent event) {
        return Native.getCmEvent(channel, event.address, 0);
    }

    /** The verbs context (device) of a bound or connected id; 0 before that. */
    public static long context(long id) {
        return Native.cmIdContext(id);
    }

    public static int portNum(long id) {
        return Native.cmIdPortNum(id);
    }

    /** The QP created on the id ({@link Verbs#createQp}), or 0. */
    public static long qp(long id) {
        return Native.cmIdQp(id);
    }

    /** "addr:port" (IPv6 in brackets) of the local or peer side, for logs; null for a bad id. */
    public static String address(long id, boolean peer) {
        return Native.cmIdAddress(id, peer);
    }

    /** {@code rdma_event_str}, e.g. "RDMA_CM_EVENT_ESTABLISHED". */
    public static String eventName(int type) {
        return Native.eventName(type);
    }

    private static int scopeId(InetAddress address) {
        return address instanceof Inet6Address ? ((Inet6Address) address).getScopeId() : 0;
    }
}
