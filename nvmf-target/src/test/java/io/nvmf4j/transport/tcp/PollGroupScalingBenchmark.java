package io.nvmf4j.transport.tcp;

import io.nvmf4j.testhost.FreePorts;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.nvmf4j.transport.tcp.CommandCostBenchmark.connect;
import static io.nvmf4j.transport.tcp.CommandCostBenchmark.drain;
import static io.nvmf4j.transport.tcp.CommandCostBenchmark.send;

/**
 * Scaling over poll groups without a load generator (issue 11, item 5): one running target (one controller,
 * one subsystem, one malloc namespace), and per JMH thread an I/O queue of that controller on a channel of its
 * own, as each poll group owns its queues. Each thread sends 4 KiB reads through its queue (parse, execution,
 * response). With {@code -t 1} and {@code -t 2} it shows how the engine's throughput grows with a second poll
 * group when nothing else needs the cores: what a socket benchmark on a 2-core machine cannot show, since
 * there the load generator takes one of the two.
 *
 * <p>Run: {@code ./dev.sh jmh PollGroupScaling -t 1} then {@code -t 2} (ops/us: commands per microsecond, all
 * threads together). Up to {@code tcp.maxIoQueues} (8) threads.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Dio.netty.leakDetection.level=disabled", "-Xmx1g"})
public class PollGroupScalingBenchmark {
    private static final int BYTES = 4096;

    /** The target and its controller (admin queue connected, enabled), shared by every thread. */
    @State(Scope.Benchmark)
    public static class Target {
        ConfigController<JavaEngine> nvmf;
        CommandDispatcher dispatcher;
        TargetConfig cfg;
        TransportLimits limits;
        ListenerConfig listener;
        EmbeddedChannel admin;
        int cntlid;
        final AtomicInteger nextQid = new AtomicInteger();

        @Setup(Level.Trial)
        public void start() throws IOException {
            cfg = TestTarget.config(FreePorts.pick());
            nvmf = JavaEngine.start(cfg);
            listener = cfg.subsystems.get(0).listeners.get(0);
            dispatcher = new CommandDispatcher(nvmf.engine().target());
            limits = new TransportLimits(TransportLimits.TRTYPE_TCP, cfg.tcp.inCapsuleDataSize, cfg.tcp.mdtsBytes,
                cfg.tcp.maxQueueDepth, cfg.tcp.maxIoQueues, 1);
            admin = CommandCostBenchmark.channel(TcpQueue.handler(dispatcher, cfg.tcp, limits, listener, IoObserver.NONE));
            send(admin, TcpPduFuzz.icReq(0));
            cntlid = connect(admin, 0, 0xFFFF);
            send(admin, PduCodec.encode(TcpPdu.CAPSULE_CMD, 0, TcpPduFuzz.propertySet(0x14, TcpPduFuzz.CC_ENABLE),
                null, false, false));
        }

        @TearDown(Level.Trial)
        public void stop() {
            admin.finishAndReleaseAll();
            nvmf.close();
        }
    }

    /** One thread's I/O queue (its own channel: its own event loop, as a poll group) and its read capsule. */
    @State(Scope.Thread)
    public static class IoQueue {
        EmbeddedChannel io;
        ByteBuf capsule;

        @Setup(Level.Trial)
        public void start(Target t) {
            int qid = t.nextQid.incrementAndGet();
            io = CommandCostBenchmark.channel(TcpQueue.handler(t.dispatcher, t.cfg.tcp, t.limits, t.listener, IoObserver.NONE));
            send(io, TcpPduFuzz.icReq(0));
            connect(io, qid, t.cntlid);
            byte[] pdu = PduCodec.encode(TcpPdu.CAPSULE_CMD, 0, NvmeHost.rw(NvmeHost.OPC_READ, 1, 8L * qid,
                BYTES / TestTarget.BLOCK_SIZE).cid(9).sgl(Sqe.SGL_TRANSPORT, 0, BYTES).toBytes(), null, false, false);
            capsule = Unpooled.directBuffer(pdu.length).writeBytes(pdu);
            // the first read answered with data: a C2HData PDU first (an error would be a CapsuleResp alone)
            io.writeInbound(capsule.retainedDuplicate());
            ByteBuf first = io.readOutbound();
            int type = first.getUnsignedByte(0);
            first.release();
            drain(io);
            if (type != TcpPdu.C2H_DATA) {
                throw new IllegalStateException("queue " + qid + ": a read answered with PDU type " + type);
            }
        }

        int read4k() {
            io.writeInbound(capsule.retainedDuplicate());
            return drain(io);
        }

        @TearDown(Level.Trial)
        public void stop() {
            io.finishAndReleaseAll();
            capsule.release();
        }
    }

    @Benchmark
    public int read4k(IoQueue q) {
        return q.read4k();
    }
}
