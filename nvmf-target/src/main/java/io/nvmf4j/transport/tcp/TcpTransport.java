package io.nvmf4j.transport.tcp;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;
import io.nvmf4j.cmd.CommandDispatcher;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.TcpTransportConfig;
import io.nvmf4j.core.TransportLimits;
import io.nvmf4j.engine.BindFailures;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.nvme.DiscoveryLog;
import io.nvmf4j.runtime.PollGroups;
import io.nvmf4j.transport.ConnectionLimits;
import io.nvmf4j.transport.Transport;
import io.nvmf4j.transport.TransportType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The NVMe/TCP transport: one server socket per listener address, accepted connections spread over the
 * poll groups, each connection handled by a {@link TcpQueue}.
 */
public final class TcpTransport implements Transport {
    private static final Logger LOG = LoggerFactory.getLogger(TcpTransport.class);

    /**
     * NVMe/TCP in the registry: TRTYPE 3; TREQ and TSAS from the listener's secure channel as nvmet's discovery
     * writes them (none: not specified, SECTYPE none; required / optional: TREQ required / not required, SECTYPE
     * TLS 1.3); a port probe by binding it.
     */
    public static final TransportType TYPE = new TransportType("tcp", TransportLimits.TRTYPE_TCP) {
        @Override
        public int treq(ListenerConfig l) {
            return DiscoveryLog.TREQ_DISABLE_SQFLOW | switch (l.secureChannelOrDefault()) {
                case ListenerConfig.SECURE_REQUIRED -> DiscoveryLog.TREQ_SECURE_REQUIRED;
                case ListenerConfig.SECURE_OPTIONAL -> DiscoveryLog.TREQ_SECURE_NOT_REQUIRED;
                default -> 0;
            };
        }

        @Override
        public void putTsas(io.netty.buffer.ByteBuf entry, int offset, ListenerConfig l) {
            entry.setByte(offset + DiscoveryLog.TSAS_TCP_SECTYPE, ListenerConfig.SECURE_NONE.equals(
                l.secureChannelOrDefault()) ? DiscoveryLog.TCP_SECTYPE_NONE : DiscoveryLog.TCP_SECTYPE_TLS13);
        }

        @Override
        public void probe(ListenerConfig l) throws IOException {
            try (ServerSocket probe = new ServerSocket()) {
                probe.setReuseAddress(true);
                probe.bind(new InetSocketAddress(l.address, l.port));
            } catch (IOException e) {
                throw new IOException(BindFailures.describe(l.address, l.port, e), e);
            }
        }

        @Override
        public Transport create(Context c) {
            return new TcpTransport(c.dispatcher(), c.config().tcp, c.pollGroups(), c.observer());
        }
    };

    /**
     * Outbound bytes (responses queued on a connection but not yet taken by its socket) above which the
     * connection stops reading, and below which it reads again. The socket's own send buffer does most of
     * the buffering; these only bound what waits in front of it, and with it the commands taken from a host
     * that does not read. 2 MiB is above a whole admin queue of 4 KiB responses (36 × ~4.4 KiB), so a host
     * that floods Identify without reading runs out of its queue and is terminated, and above a host's usual
     * depth of large reads (8 × 128 KiB), which before (at 256 KiB) paused and resumed the reader, two
     * epoll changes each time, on every few responses of a 128 KiB read stream; a full queue of 128 KiB reads
     * (16 MiB) that the host does not take still crosses it and pauses the reader. The memory behind it is the
     * requests' own buffers, bounded by the queue depth whatever the mark.
     */
    static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(512 * 1024, 2 * 1024 * 1024);

    private final CommandDispatcher dispatcher;
    private final TcpTransportConfig config;
    private final TransportLimits limits;
    private final PollGroups pollGroups;
    private final Map<ListenerConfig, Channel> servers = new ConcurrentHashMap<>();
    /**
     * Every accepted connection while it is open. {@link #close} closes them while the poll groups still run, so
     * each one's close runs its handlers (the reader frees its queue and the writer's staging buffer): a channel
     * left to the event loops' shutdown is dropped without its inactive event, and its buffers with it.
     */
    private final Set<Channel> accepted = ConcurrentHashMap.newKeySet();
    private final IoObserver observer;
    private final TlsPsks psks;

    public TcpTransport(CommandDispatcher dispatcher, TcpTransportConfig config, PollGroups pollGroups,
                        IoObserver observer) {
        this.dispatcher = dispatcher;
        this.observer = observer;
        this.config = config;
        this.pollGroups = pollGroups;
        this.psks = new TlsPsks(dispatcher.target());
        this.limits = new TransportLimits(TransportLimits.TRTYPE_TCP, config.inCapsuleDataSize, config.mdtsBytes,
            config.maxQueueDepth, config.maxIoQueues, 1);
    }

    @Override
    public TransportType type() {
        return TYPE;
    }

    @Override
    public TransportLimits limits() {
        return limits;
    }

    /** Binds the listener (idempotent); returns the bound address. */
    @Override
    public synchronized InetSocketAddress listen(ListenerConfig listener) throws IOException {
        Channel existing = servers.get(listener);
        if (existing != null) {
            return (InetSocketAddress) existing.localAddress();
        }
        String secure = ListenerConfig.SECURE_NONE.equals(listener.secureChannelOrDefault()) ? null
            : listener.secureChannelOrDefault();
        ConnectionLimits connections = new ConnectionLimits("tcp " + BindFailures.hostPort(listener.address,
            listener.port), config.maxConnectionsPerListener, config.maxConnectionsPerHost,
            limit -> observer.connectionRefused(TcpQueue.TRANSPORT, limit));
        ServerBootstrap b = new ServerBootstrap()
            .group(pollGroups.acceptor(), pollGroups.workers())
            .channel(pollGroups.serverChannelClass())
            .option(ChannelOption.SO_BACKLOG, 256)
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.SO_KEEPALIVE, true)
            .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
            .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK);
        if (config.socketBufferBytes > 0) {
            // the receive buffer on the listening socket, so that accepted ones start with it (the window scale of
            // the handshake follows it); the send buffer on each accepted one
            b.option(ChannelOption.SO_RCVBUF, config.socketBufferBytes)
                .childOption(ChannelOption.SO_RCVBUF, config.socketBufferBytes)
                .childOption(ChannelOption.SO_SNDBUF, config.socketBufferBytes);
        }
        b.childHandler(new ChannelInitializer<>() {
            @Override
            protected void initChannel(Channel ch) {
                InetAddress host = ((InetSocketAddress) ch.remoteAddress()).getAddress();
                if (connections.admit(host) != null) {
                    ch.close();
                    return;
                }
                accepted.add(ch);
                ch.closeFuture().addListener(x -> {
                    connections.release(host);
                    accepted.remove(ch);
                });
                if (secure != null) {
                    ch.pipeline().addLast("secure-channel", new SecureChannelSelector(
                        ListenerConfig.SECURE_REQUIRED.equals(secure), psks));
                }
                TcpPduReader reader = TcpQueue.handler(dispatcher, config, limits, listener, observer);
                ch.config().setRecvByteBufAllocator(new InPlaceReads(reader, ch.config().getRecvByteBufAllocator()));
                ch.pipeline().addLast("nvme-tcp", reader);
            }
        });
        ChannelFuture f = b.bind(listener.address, listener.port).awaitUninterruptibly();
        if (!f.isSuccess()) {
            throw new IOException(BindFailures.describe(listener.address, listener.port, f.cause()), f.cause());
        }
        servers.put(listener, f.channel());
        InetSocketAddress bound = (InetSocketAddress) f.channel().localAddress();
        LOG.info("listening on tcp {}{}{}", BindFailures.hostPort(listener.address, bound.getPort()),
            listener.port == 0 ? " (port 0: picked " + bound.getPort() + ")" : "",
            secure == null ? "" : ", TLS 1.3 with PSK " + secure);
        return bound;
    }

    /** Stops accepting on a listener; connected queues stay. */
    @Override
    public synchronized void stopListening(ListenerConfig listener) {
        Channel ch = servers.remove(listener);
        if (ch != null) {
            ch.close().awaitUninterruptibly();
        }
    }

    @Override
    public synchronized void close() {
        for (Channel ch : servers.values()) {
            ch.close().awaitUninterruptibly();
        }
        servers.clear();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CLOSE_WAIT_SECONDS);
        for (Channel ch : accepted.toArray(new Channel[0])) {
            ch.close();
        }
        for (Channel ch : accepted.toArray(new Channel[0])) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || !ch.closeFuture().awaitUninterruptibly(TimeUnit.NANOSECONDS.toMillis(left))) {
                LOG.warn("tcp: {} connection(s) still closing {} s after the transport's close",
                    accepted.size(), CLOSE_WAIT_SECONDS);
                break;
            }
        }
    }

    /** How long {@link #close} waits for its connections' close (a bound for a stuck close only). */
    private static final int CLOSE_WAIT_SECONDS = 10;
}
