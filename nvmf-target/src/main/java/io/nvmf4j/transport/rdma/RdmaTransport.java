package io.nvmf4j.transport.rdma;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoop;
import io.netty.channel.unix.FileDescriptor;
import io.netty.util.concurrent.EventExecutor;
import io.nvmf4j.cmd.CommandDispatcher;
import io.nvmf4j.cmd.FabricsCommands;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.RdmaTransportConfig;
import io.nvmf4j.core.TransportLimits;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.rdma.AsyncEvents;
import io.nvmf4j.rdma.CmEvent;
import io.nvmf4j.rdma.Errno;
import io.nvmf4j.rdma.Rdma;
import io.nvmf4j.rdma.RdmaCm;
import io.nvmf4j.runtime.FdWatch;
import io.nvmf4j.runtime.PollGroups;
import io.nvmf4j.transport.ConnectionLimits;
import io.nvmf4j.transport.Transport;
import io.nvmf4j.transport.TransportType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;

/**
 * The NVMe/RDMA transport: CM listeners, connection set-up and teardown, and the devices with their
 * poll groups ({@link RdmaPollGroup}: one per device and event loop of {@link PollGroups#workers()}).
 *
 * <p>Threads: all CM work runs on the acceptor event loop (the "CM thread"): the event channel's fd is
 * registered with its epoll, events are taken, handled and acked there; CM ids are created, rejected and
 * destroyed there. A CONNECT_REQUEST is checked ({@link CmPrivateData}), its queue pair built and placed
 * on the least loaded poll group (which attaches it on its own thread before we accept, so no capsule
 * can arrive for an unknown QP), then accepted with {@code nvme_rdma_cm_rep}. DISCONNECTED,
 * TIMEWAIT_EXIT and errors are handed to the owning poll group ({@link RdmaQueue#disconnect}).
 *
 * <p>Each device's asynchronous events ({@link AsyncEvents}) are read on the CM thread too: QP fatal,
 * request and access errors close the queue pair, LAST_WQE_REACHED lets a closing one be destroyed (both
 * handed to its poll group), port and device events are logged (a fatal device closes its queue pairs).
 *
 * <p>Where RDMA cannot work (no device, no rdma_cm, the native library or epoll missing), the transport
 * is unavailable: {@link #listen} logs the cause once and returns null, and the target carries on.
 */
public final class RdmaTransport implements Transport {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaTransport.class);

    /**
     * NVMe/RDMA in the registry: TRTYPE 1; TSAS (NVMe-oF 1.1 figure 40) RDMA_QPTYPE reliable connected (1),
     * RDMA_PRTYPE not specified (1), RDMA_CMS RDMA_CM (1).
     */
    public static final TransportType TYPE = new TransportType("rdma", TransportLimits.TRTYPE_RDMA) {
        @Override
        public void putTsas(io.netty.buffer.ByteBuf entry, int offset) {
            entry.setByte(offset, 1);
            entry.setByte(offset + 1, 1);
            entry.setByte(offset + 2, 1);
        }

        @Override
        public Transport create(Context c) {
            return new RdmaTransport(c.dispatcher(), c.config().rdma, c.pollGroups(), c.observer());
        }
    };

    private static final int BACKLOG = 128;

    private final CommandDispatcher dispatcher;
    private final RdmaTransportConfig config;
    private final TransportLimits limits;
    private final PollGroups pollGroups;
    private final IoObserver observer;
    private final String unavailable;
    private boolean warned;
    private IoEventLoop cmLoop;
    private long channel;
    private CmEvent event;
    private final Map<ListenerConfig, Long> listenIds = new HashMap<>();
    private final Map<Long, ListenerConfig> listenerById = new ConcurrentHashMap<>();
    private final Map<Long, ConnectionLimits> limitsById = new ConcurrentHashMap<>();
    private final Map<Long, QueuePair> queues = new ConcurrentHashMap<>();
    private final Map<Long, RdmaDevice> devices = new ConcurrentHashMap<>();
    private final Map<Long, Boolean> sendWithInvalidateWarned = new ConcurrentHashMap<>();

    public RdmaTransport(CommandDispatcher dispatcher, RdmaTransportConfig config, PollGroups pollGroups,
                         IoObserver observer) {
        this.dispatcher = dispatcher;
        this.config = config;
        this.pollGroups = pollGroups;
        this.observer = observer;
        this.limits = new TransportLimits(TransportLimits.TRTYPE_RDMA, config.inCapsuleDataSize, config.mdtsBytes,
            config.maxQueueDepth, config.maxIoQueues, RdmaSgl.MSDBD);
        this.unavailable = unavailabilityCause(pollGroups);
    }

    private static String unavailabilityCause(PollGroups pollGroups) {
        try {
            if (!Rdma.isAvailable()) {
                return Rdma.unavailabilityCause();
            }
        } catch (LinkageError e) {
            return "rdma-cm binding unusable: " + e;
        }
        if (!pollGroups.watchFds()) {
            return "the RDMA poll groups need event loops that watch fds (epoll or io_uring); these run on "
                + pollGroups.socketIo();
        }
        return null;
    }

    @Override
    public TransportType type() {
        return TYPE;
    }

    @Override
    public TransportLimits limits() {
        return limits;
    }

    /** Null when RDMA works here, else why not (one line). */
    @Override
    public String unavailability() {
        return unavailable;
    }

    /**
     * Binds an RDMA listener (idempotent); returns the bound address, or null when RDMA is unavailable
     * (logged once as a warning with the cause).
     */
    @Override
    public synchronized InetSocketAddress listen(ListenerConfig listener) throws IOException {
        if (unavailable != null) {
            if (!warned) {
                warned = true;
                LOG.warn("RDMA unavailable, rdma listener {} not bound (TCP carries on): {}", listener, unavailable);
            } else {
                LOG.debug("RDMA unavailable, rdma listener {} not bound", listener);
            }
            return null;
        }
        Long existing = listenIds.get(listener);
        if (existing != null) {
            return boundAddress(existing, listener);
        }
        startCmThread();
        InetAddress address = InetAddress.getByName(listener.address);
        long[] result = new long[1];
        String[] error = new String[1];
        cmLoop.submit(() -> {
            long id = RdmaCm.createId(channel, RdmaCm.PS_TCP);
            if (id < 0) {
                error[0] = "rdma_create_id: " + Errno.describe((int) id);
                return;
            }
            int rc = RdmaCm.bind(id, address, listener.port);
            if (rc == 0) {
                rc = RdmaCm.listen(id, BACKLOG);
            }
            if (rc < 0) {
                RdmaCm.destroyId(id);
                error[0] = "rdma_bind_addr/rdma_listen: " + Errno.describe(rc);
                return;
            }
            result[0] = id;
        }).syncUninterruptibly();
        if (error[0] != null) {
            throw new IOException("cannot listen on rdma " + listener.address + ":" + listener.port + ": " + error[0]);
        }
        listenIds.put(listener, result[0]);
        listenerById.put(result[0], listener);
        limitsById.put(result[0], new ConnectionLimits("rdma " + listener.address + ":" + listener.port,
            config.maxConnectionsPerListener, config.maxConnectionsPerHost,
            limit -> observer.connectionRefused(TYPE.name(), limit)));
        InetSocketAddress bound = boundAddress(result[0], listener);
        LOG.info("listening on rdma {} (device {})", bound, deviceNameOf(result[0]));
        return bound;
    }

    private static String deviceNameOf(long id) {
        long ctx = RdmaCm.context(id);
        return ctx == 0 ? "any" : Rdma.deviceName(ctx);
    }

    private static InetSocketAddress boundAddress(long id, ListenerConfig l) {
        String a = RdmaCm.address(id, false);
        int port = l.port;
        if (a != null && a.lastIndexOf(':') > 0) {
            try {
                port = Integer.parseInt(a.substring(a.lastIndexOf(':') + 1));
            } catch (NumberFormatException e) {
                // keep the configured port
            }
        }
        return new InetSocketAddress(l.address, port);
    }

    /** Stops accepting on a listener; connected queue pairs stay. */
    @Override
    public synchronized void stopListening(ListenerConfig listener) {
        Long id = listenIds.remove(listener);
        if (id != null) {
            listenerById.remove(id);
            limitsById.remove(id);
            cmLoop.submit(() -> RdmaCm.destroyId(id)).syncUninterruptibly();
        }
    }

    private void startCmThread() throws IOException {
        if (cmLoop != null) {
            return;
        }
        EventExecutor e = pollGroups.acceptor().next();
        if (!(e instanceof IoEventLoop loop)) {
            throw new IOException("the acceptor loop cannot take an RDMA CM channel: " + e.getClass().getName());
        }
        long ch = RdmaCm.createEventChannel(true);
        if (ch < 0) {
            throw new IOException("rdma_create_event_channel: " + Errno.describe((int) ch));
        }
        channel = ch;
        event = new CmEvent();
        try {
            FdWatch.watch(loop, new FileDescriptor(RdmaCm.eventChannelFd(ch)), "the RDMA CM event channel",
                this::onCmEvents);
        } catch (IllegalStateException x) {
            throw new IOException(x.getMessage(), x);
        }
        cmLoop = loop;
    }

    // ---------------------------------------------------------------- CM thread

    private void onCmEvents() {
        while (true) {
            int rc = RdmaCm.getEvent(channel, event);
            if (rc == -Errno.EAGAIN) {
                return;
            }
            if (rc < 0) {
                LOG.warn("rdma_get_cm_event: {}", Errno.describe(rc));
                return;
            }
            try {
                onCmEvent(event);
            } catch (RuntimeException e) {
                LOG.error("handling {}: {}", RdmaCm.eventName(event.type()), e.toString(), e);
            } finally {
                if (event.eventHandle() != 0) {
                    event.ack();
                }
            }
        }
    }

    private void onCmEvent(CmEvent ev) {
        int type = ev.type();
        long id = ev.id();
        if (type == RdmaCm.EVENT_CONNECT_REQUEST) {
            onConnectRequest(ev);
            return;
        }
        if (type == RdmaCm.EVENT_ESTABLISHED) {
            QueuePair qp = queues.get(id);
            LOG.debug("rdma connection established: {}", qp == null ? id : qp.queue);
            return;
        }
        if (listenerById.containsKey(id)) {
            LOG.warn("rdma listener {}: {} (status {})", listenerById.get(id), RdmaCm.eventName(type), ev.status());
            return;
        }
        QueuePair qp = queues.get(id);
        if (qp == null) {
            LOG.debug("{} for an unknown CM id", RdmaCm.eventName(type));
            return;
        }
        if (type == RdmaCm.EVENT_DISCONNECTED || type == RdmaCm.EVENT_TIMEWAIT_EXIT
            || type == RdmaCm.EVENT_CONNECT_ERROR || type == RdmaCm.EVENT_UNREACHABLE
            || type == RdmaCm.EVENT_REJECTED || type == RdmaCm.EVENT_DEVICE_REMOVAL) {
            qp.queue.disconnect(RdmaCm.eventName(type));
        }
    }

    private void onConnectRequest(CmEvent ev) {
        long id = ev.id();
        String peer = RdmaCm.address(id, true);
        ListenerConfig listener = listenerById.get(ev.listenId());
        ConnectionLimits connections = limitsById.get(ev.listenId());
        InetAddress host = hostOf(peer);
        if (admit(connections, host) != 0) {
            reject(ev, CmPrivateData.REJECT_NO_RESOURCES, peer); // ConnectionLimits logged which limit
            return;
        }
        boolean accepted = false;
        try {
            accepted = accept(ev, peer, listener, connections, host);
        } finally {
            if (!accepted && connections != null) {
                connections.release(host);
            }
        }
    }

    /**
     * Counts a connection from {@code host} in the listener's {@code connections} (none: a listener being
     * removed): 0 when admitted (released when its queue pair is destroyed), else the CM reject status (no
     * resources).
     */
    static int admit(ConnectionLimits connections, InetAddress host) {
        return connections == null || connections.admit(host) == null ? 0 : CmPrivateData.REJECT_NO_RESOURCES;
    }

    /**
     * The host of a CM id's peer address ("a.b.c.d:port" or "[v6]:port", as rdma-cm gives it), parsed as a
     * literal only (never a name lookup); 0.0.0.0 for anything else, so that such a peer still counts towards
     * the listener's limit.
     */
    static InetAddress hostOf(String peer) {
        try {
            if (peer != null && peer.startsWith("[") && peer.indexOf(']') > 1) {
                return InetAddress.getByName(peer.substring(0, peer.indexOf(']') + 1)); // bracketed: literal only
            }
            if (peer != null && peer.matches("\\d{1,3}(\\.\\d{1,3}){3}:\\d+")) {
                String[] parts = peer.substring(0, peer.lastIndexOf(':')).split("\\.");
                byte[] b = new byte[4];
                for (int i = 0; i < 4; i++) {
                    int v = Integer.parseInt(parts[i]);
                    if (v > 255) {
                        return InetAddress.getByAddress(new byte[4]);
                    }
                    b[i] = (byte) v;
                }
                return InetAddress.getByAddress(b);
            }
            return InetAddress.getByAddress(new byte[4]);
        } catch (java.net.UnknownHostException e) {
            try {
                return InetAddress.getByAddress(new byte[4]);
            } catch (java.net.UnknownHostException impossible) {
                throw new IllegalStateException(impossible);
            }
        }
    }

    /**
     * Sets up and accepts the queue pair of a CONNECT_REQUEST, or rejects it; true once a queue pair exists
     * (it then carries the connection count, released by its teardown).
     */
    private boolean accept(CmEvent ev, String peer, ListenerConfig listener, ConnectionLimits connections,
                           InetAddress host) {
        long id = ev.id();
        RdmaDevice device;
        try {
            device = device(RdmaCm.context(id));
        } catch (IOException | RuntimeException e) {
            LOG.warn("rdma connect from {}: device set-up failed: {}", peer, e.toString());
            reject(ev, CmPrivateData.REJECT_NO_RESOURCES, peer);
            return false;
        }
        int maxRead = Math.max(1, Math.min(config.maxReadDepth, device.attributes.maxQpInitRdAtom()));
        CmPrivateData.Negotiation n = CmPrivateData.negotiate(ev.privateData(), ev.initiatorDepth(),
            config.maxIoQueues, config.maxQueueDepth, FabricsCommands.ADMIN_QUEUE_MAX_ENTRIES, device.maxDepth(),
            maxRead);
        if (!n.accepted()) {
            LOG.info("rdma connect from {} rejected: {} (qid {}, hrqsize {}, hsqsize {}, initiator depth {})", peer,
                CmPrivateData.describeReject(n.reject()), peek(ev, CmPrivateData.QID), peek(ev, CmPrivateData.HRQSIZE),
                peek(ev, CmPrivateData.HSQSIZE), ev.initiatorDepth());
            reject(ev, n.reject(), peer);
            return false;
        }
        RdmaPollGroup group = device.place(n.depth());
        if (group == null) {
            LOG.warn("rdma connect from {} rejected: no poll group has CQ room for depth {}", peer, n.depth());
            reject(ev, CmPrivateData.REJECT_NO_RESOURCES, peer);
            return false;
        }
        QueuePair qp;
        try {
            qp = new QueuePair(this, group, id, n.depth());
        } catch (IOException | RuntimeException e) {
            group.unreserve(n.depth());
            LOG.warn("rdma connect from {} rejected: {}", peer, e.toString());
            reject(ev, CmPrivateData.REJECT_NO_RESOURCES, peer);
            return false;
        }
        qp.connections = connections;
        qp.host = host;
        RdmaQueue queue = new RdmaQueue(dispatcher, limits, listener, observer, group.loop, group.buffers,
            peer, n.depth(), n.readDepth(), config.maxParkedCapsules, qp.responses());
        queue.cmQid(n.qid());
        queue.attach(qp);
        qp.queue = queue;
        queues.put(id, qp);
        group.loop.submit(() -> group.attach(qp)).syncUninterruptibly();
        observer.connectionOpened(RdmaQueue.TRANSPORT);
        // responder resources 0: a host never RDMA READs from us; a finite RNR retry count on our own QP
        // (acceptRts sets it, the CM would take the host's): a host that stops posting receives fails this
        // QP (torn down, its buffers released) instead of holding them for good
        int rc = RdmaCm.acceptRts(id, CmPrivateData.acceptData(n.depth()), 0, n.readDepth(),
            config.rnrRetryCount);
        if (rc < 0) {
            LOG.warn("rdma_accept from {}: {}", peer, Errno.describe(rc));
            queue.disconnect("rdma_accept failed");
            return true; // its teardown releases the connection count
        }
        LOG.debug("rdma connect from {}: qid {} depth {} read depth {} on {}", peer, n.qid(), n.depth(),
            n.readDepth(), group);
        return true;
    }

    private static int peek(CmEvent ev, int offset) {
        java.nio.ByteBuffer pd = ev.privateData();
        return pd.limit() >= offset + 2 ? Short.toUnsignedInt(Short.reverseBytes(pd.getShort(offset))) : -1;
    }

    private static void reject(CmEvent ev, int status, String peer) {
        long id = ev.id();
        int rc = RdmaCm.reject(id, CmPrivateData.rejectData(status));
        if (rc < 0) {
            LOG.warn("rdma_reject of {}: {}", peer, Errno.describe(rc));
        }
        ev.ack();
        RdmaCm.destroyId(id);
    }

    private RdmaDevice device(long context) throws IOException {
        RdmaDevice d = devices.get(context);
        if (d != null) {
            return d;
        }
        d = new RdmaDevice(context);
        LOG.info("rdma device {}: {}; send with invalidate {}", d.name, d.attributes,
            d.attributes.supportsSendWithInvalidate() ? "supported" : "not supported");
        watchAsyncEvents(d);
        EventLoopGroup workers = pollGroups.workers();
        List<RdmaPollGroup> groups = new ArrayList<>();
        for (EventExecutor e : workers) {
            groups.add(new RdmaPollGroup((IoEventLoop) e, d, config));
        }
        d.groups.addAll(groups);
        devices.put(context, d);
        return d;
    }

    // ---------------------------------------------------------------- asynchronous events (CM thread)

    private void watchAsyncEvents(RdmaDevice d) throws IOException {
        AsyncEvents events = new AsyncEvents(d.context);
        try {
            // the fd belongs to the device context (librdmacm's), never closed here
            FdWatch.watch(cmLoop, new FileDescriptor(events.fd()), "the async events of " + d.name,
                () -> onAsyncEvents(d, events));
        } catch (IllegalStateException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    private void onAsyncEvents(RdmaDevice d, AsyncEvents events) {
        int rc;
        while ((rc = events.next()) == 0) {
            try {
                onAsyncEvent(d, events);
            } catch (RuntimeException e) {
                LOG.error("handling async event {} of {}: {}", AsyncEvents.name(events.type()), d.name, e.toString(), e);
            }
        }
        if (rc != -Errno.EAGAIN) {
            LOG.warn("ibv_get_async_event on {}: {}", d.name, Errno.describe(rc));
        }
    }

    private void onAsyncEvent(RdmaDevice d, AsyncEvents ev) {
        int type = ev.type();
        String name = AsyncEvents.name(type);
        if (AsyncEvents.isQpEvent(type)) {
            QueuePair qp = byQpHandle(ev.qp());
            if (qp == null) {
                LOG.debug("rdma device {}: {} for QP {} (gone)", d.name, name, ev.qpNum());
            } else if (type == AsyncEvents.QP_LAST_WQE_REACHED) {
                LOG.debug("{}: {}", qp.queue, name);
                onPollGroup(qp, qp::onLastWqeReached);
            } else if (type == AsyncEvents.QP_FATAL || type == AsyncEvents.QP_REQ_ERR
                || type == AsyncEvents.QP_ACCESS_ERR || type == AsyncEvents.PATH_MIG_ERR) {
                LOG.info("{}: {}", qp.queue, name);
                onPollGroup(qp, () -> qp.queue.onQpError(name));
            } else {
                LOG.debug("{}: {}", qp.queue, name);
            }
        } else if (type == AsyncEvents.PORT_ERR) {
            LOG.warn("rdma device {} port {}: {}", d.name, ev.port(), name);
        } else if (type == AsyncEvents.DEVICE_FATAL) {
            LOG.error("rdma device {}: {}; closing its queue pairs", d.name, name);
            for (QueuePair qp : queues.values()) {
                if (qp.group.device == d) {
                    qp.queue.disconnect(name);
                }
            }
        } else if (type == AsyncEvents.CQ_ERR || type == AsyncEvents.SRQ_ERR) {
            LOG.error("rdma device {}: {}", d.name, name);
        } else {
            LOG.info("rdma device {}{}: {}", d.name, type == AsyncEvents.SRQ_LIMIT_REACHED ? "" : " port " + ev.port(),
                name);
        }
    }

    private QueuePair byQpHandle(long handle) {
        for (QueuePair qp : queues.values()) {
            if (qp.qp == handle) {
                return qp;
            }
        }
        return null;
    }

    private static void onPollGroup(QueuePair qp, Runnable task) {
        try {
            qp.group.loop.execute(task);
        } catch (RejectedExecutionException e) {
            // the poll group is stopping: its queue pairs go with it
        }
    }

    /** A QP on {@code d} did not report LAST_WQE_REACHED in time and is destroyed anyway (logged once per device). */
    void lastWqeTimedOut(RdmaDevice d, long timeoutMs) {
        if (d.lastWqeTimeoutLogged.compareAndSet(false, true)) {
            LOG.info("rdma device {}: a queue pair in the error state reported no last WQE reached within {} ms; "
                + "it is destroyed after that timeout (so are later ones on this device; logged once)", d.name,
                timeoutMs);
        }
    }

    /** SEND_WITH_INV for responses on this device; where it lacks it, plain SEND (logged once). */
    boolean sendWithInvalidate(RdmaDevice d) {
        if (d.attributes.supportsSendWithInvalidate()) {
            return true;
        }
        if (sendWithInvalidateWarned.putIfAbsent(d.context, Boolean.TRUE) == null) {
            LOG.info("rdma device {} lacks send with invalidate: responses use SEND and the host invalidates "
                + "its keys itself", d.name);
        }
        return false;
    }

    /** A queue pair's verbs resources are gone (poll-group thread): forget it and destroy its CM id. */
    void queueDestroyed(QueuePair qp) {
        observer.connectionClosed(RdmaQueue.TRANSPORT);
        if (qp.connections != null) {
            qp.connections.release(qp.host);
        }
        Runnable destroy = () -> {
            queues.remove(qp.cmId);
            RdmaCm.destroyId(qp.cmId);
        };
        try {
            cmLoop.execute(destroy);
        } catch (RejectedExecutionException e) {
            destroy.run(); // shutting down: the CM thread is gone (it stops first), nothing else uses the id
        }
    }

    @Override
    public synchronized void close() {
        if (cmLoop == null) {
            return;
        }
        for (Long id : listenIds.values()) {
            cmLoop.submit(() -> RdmaCm.destroyId(id)).awaitUninterruptibly();
        }
        listenIds.clear();
        listenerById.clear();
        limitsById.clear();
    }
}
