package io.nvmf4j.transport.tcp;

import io.nvmf4j.testhost.FreePorts;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.nvmf4j.cmd.CommandDispatcher;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.core.TransportLimits;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.PduCodec;
import io.nvmf4j.testhost.Sqe;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * The engine's cost per command without sockets: one NVMe/TCP capsule into a real {@link TcpQueue} of a
 * running target (its dispatcher, subsystem and malloc namespace), through parse, execution and the
 * response PDUs, the requests freed once the response is written. The channel is Netty's
 * {@link EmbeddedChannel}: its pipeline and outbound queue stand in for the socket (and add a little).
 *
 * <ul>
 *   <li>{@code read4k}: a 4 KiB read with a transport SGL: CapsuleCmd in, C2HData + CapsuleResp out
 *       (the malloc bdev's copy of 4 KiB included).</li>
 *   <li>{@code write4k}: a 4 KiB write with its data in the capsule: CapsuleCmd + data in, CapsuleResp out.</li>
 *   <li>{@code flush}: a Flush (no data): the fixed cost of a command.</li>
 *   <li>{@code harness}: no target: a handler that answers each capsule with a 24-byte response the way the
 *       queue does (a pooled buffer written, flushed at the end of the read). What the channel and the
 *       measuring cost by themselves; the engine's own cost per command is a row's figure minus this.</li>
 * </ul>
 *
 * Run: {@code ./dev.sh jmh} (JMH's options after it, e.g. {@code ./dev.sh jmh -f 1 -wi 3 -i 5}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled", "-Dio.netty.recycler.chunkSize=1024",
    "-Dio.netty.allocator.useCacheForAllThreads=true",
    "-Xmx1g"})
public class CommandCostBenchmark {
    private static final int BYTES = 4096;

    @Param({"read4k", "write4k", "flush", "harness"})
    public String command;

    private ConfigController<JavaEngine> nvmf;
    private EmbeddedChannel admin;
    private EmbeddedChannel io;
    private ByteBuf capsule;
    private long pdusOut;

    @Setup(Level.Trial)
    public void start() throws IOException {
        if (command.equals("harness")) {
            io = channel(new Echo());
            capsule = Unpooled.directBuffer(72).writeZero(72);
            if (run() != 1) {
                throw new IllegalStateException("harness: no response");
            }
            return;
        }
        TargetConfig cfg = TestTarget.config(FreePorts.pick());
        nvmf = JavaEngine.start(cfg);
        EmbeddedChannel[] queues = connectedQueues(nvmf, cfg, PooledByteBufAllocator.DEFAULT);
        admin = queues[0];
        io = queues[1];
        int nlb = BYTES / TestTarget.BLOCK_SIZE;
        byte[] pdu = switch (command) {
            case "read4k" -> PduCodec.encode(TcpPdu.CAPSULE_CMD, 0,
                NvmeHost.rw(NvmeHost.OPC_READ, 1, 8, nlb).cid(9).sgl(Sqe.SGL_TRANSPORT, 0, BYTES).toBytes(), null,
                false, false);
            case "write4k" -> PduCodec.encode(TcpPdu.CAPSULE_CMD, 0,
                NvmeHost.rw(NvmeHost.OPC_WRITE, 1, 8, nlb).cid(9).sgl(Sqe.SGL_IN_CAPSULE, 0, BYTES).toBytes(),
                new byte[BYTES], false, false);
            case "flush" -> PduCodec.encode(TcpPdu.CAPSULE_CMD, 0,
                Sqe.of(0x00).nsid(1).cid(9).sgl(Sqe.SGL_TRANSPORT, 0, 0).toBytes(), null, false, false);
            default -> throw new IllegalArgumentException(command);
        };
        capsule = Unpooled.directBuffer(pdu.length).writeBytes(pdu);
        // one command end to end, and its answer checked, before measuring
        pdusOut = 0;
        if (run() == 0) {
            throw new IllegalStateException(command + ": no response");
        }
    }

    /**
     * A channel for {@code handler} with the allocator the service's NVMe/TCP connections have
     * ({@link TcpTransport}: the pooled allocator, not Netty's default, which 4.2 made the adaptive one).
     */
    static EmbeddedChannel channel(ChannelHandler handler) {
        EmbeddedChannel ch = new EmbeddedChannel(handler);
        ch.config().setAllocator(PooledByteBufAllocator.DEFAULT);
        return ch;
    }

    /**
     * An admin queue and one I/O queue of a controller of {@code nvmf}'s first subsystem, connected, the
     * controller enabled: NVMe/TCP queues on {@link EmbeddedChannel}s, the I/O queue's allocator {@code ioAlloc}.
     */
    static EmbeddedChannel[] connectedQueues(ConfigController<JavaEngine> nvmf, TargetConfig cfg, io.netty.buffer.ByteBufAllocator ioAlloc) {
        return connectedQueues(nvmf, cfg, ioAlloc, IoObserver.NONE);
    }

    /** {@link #connectedQueues(ConfigController, TargetConfig, io.netty.buffer.ByteBufAllocator)}, the I/O queue observed by {@code ioObserver}. */
    static EmbeddedChannel[] connectedQueues(ConfigController<JavaEngine> nvmf, TargetConfig cfg, io.netty.buffer.ByteBufAllocator ioAlloc,
                                             IoObserver ioObserver) {
        ListenerConfig listener = cfg.subsystems.get(0).listeners.get(0);
        CommandDispatcher dispatcher = new CommandDispatcher(nvmf.engine().target());
        TransportLimits limits = new TransportLimits(TransportLimits.TRTYPE_TCP, cfg.tcp.inCapsuleDataSize,
            cfg.tcp.mdtsBytes, cfg.tcp.maxQueueDepth, cfg.tcp.maxIoQueues, 1);
        EmbeddedChannel admin = channel(TcpQueue.handler(dispatcher, cfg.tcp, limits, listener, IoObserver.NONE));
        EmbeddedChannel io = new EmbeddedChannel(TcpQueue.handler(dispatcher, cfg.tcp, limits, listener, ioObserver));
        io.config().setAllocator(ioAlloc);
        send(admin, TcpPduFuzz.icReq(0));
        int cntlid = connect(admin, 0, 0xFFFF);
        send(admin, PduCodec.encode(TcpPdu.CAPSULE_CMD, 0, TcpPduFuzz.propertySet(0x14, TcpPduFuzz.CC_ENABLE), null,
            false, false));
        send(io, TcpPduFuzz.icReq(0));
        connect(io, 1, cntlid);
        return new EmbeddedChannel[] {admin, io};
    }

    static void send(EmbeddedChannel ch, byte[] pdu) {
        ch.writeInbound(Unpooled.wrappedBuffer(pdu));
        drain(ch);
    }

    /** Sends a Connect and returns the controller id of its response. */
    static int connect(EmbeddedChannel ch, int qid, int cntlid) {
        ch.writeInbound(Unpooled.wrappedBuffer(PduCodec.encode(TcpPdu.CAPSULE_CMD, 0, TcpPduFuzz.connect(qid, 31, cntlid),
            TcpPduFuzz.connectData(cntlid), false, false)));
        ByteBuf resp = ch.readOutbound();
        try {
            int status = resp.getUnsignedShortLE(TcpPdu.CH_SIZE + 14) >> 1;
            if (resp.getUnsignedByte(0) != TcpPdu.CAPSULE_RESP || status != 0) {
                throw new IllegalStateException("Connect of queue " + qid + " refused: status 0x" + Integer.toHexString(status));
            }
            return resp.getUnsignedShortLE(TcpPdu.CH_SIZE);
        } finally {
            resp.release();
            drain(ch);
        }
    }

    static int drain(EmbeddedChannel ch) {
        int n = 0;
        for (Object o = ch.readOutbound(); o != null; o = ch.readOutbound()) {
            ReferenceCountUtil.release(o);
            n++;
        }
        return n;
    }

    /** One command in, its response out and released; returns the buffers written. */
    private int run() {
        io.writeInbound(capsule.retainedDuplicate());
        return drain(io);
    }

    @Benchmark
    public int command() {
        return run();
    }

    @TearDown(Level.Trial)
    public void stop() {
        io.finishAndReleaseAll();
        capsule.release();
        if (nvmf != null) {
            admin.finishAndReleaseAll();
            nvmf.close();
        }
    }

    /** The harness row's handler: reads the capsule, answers with a 24-byte PDU, flushes at read complete. */
    private static final class Echo extends io.netty.channel.ChannelInboundHandlerAdapter {
        private boolean pending;

        @Override
        public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            ByteBuf out = ctx.alloc().directBuffer(TcpPdu.RESP_HLEN);
            out.writeLong(in.getLong(0)).writeLong(in.getLong(8)).writeLong(in.getLong(16));
            in.release();
            ctx.write(out, ctx.voidPromise());
            pending = true;
        }

        @Override
        public void channelReadComplete(io.netty.channel.ChannelHandlerContext ctx) {
            if (pending) {
                pending = false;
                ctx.flush();
            }
        }
    }
}
