package io.nvmf4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.nvmf4j.engine.IoNamespace;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.nvme.Opcodes;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.PduCodec;
import io.nvmf4j.testhost.Sqe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The latency of an NVMe/TCP command is recorded when its response is flushed: the commands that one socket read
 * brought in share one clock reading at the flush that ends the read batch (and so, having arrived together, one
 * latency), each is recorded exactly once, and a command whose batch ends in a termination of the connection is
 * recorded all the same. An {@link EmbeddedChannel} stands in for the socket: one {@code writeInbound} is one read.
 */
class BatchLatencyTest {
    private static final int BYTES = 4096;
    private static final int NLB = BYTES / TestTarget.BLOCK_SIZE;

    private final List<Long> readLatencies = new ArrayList<>();
    private EmbeddedQueues queues;
    private EmbeddedChannel io;
    private int cid;

    @BeforeEach
    void start() throws Exception {
        queues = EmbeddedQueues.start(PooledByteBufAllocator.DEFAULT, new IoObserver() {
            @Override
            public void ioCompleted(IoNamespace ns, int opcode, int bytes, long latencyNanos, int status) {
                if (opcode == Opcodes.IO_READ) {
                    readLatencies.add(latencyNanos);
                }
            }
        });
        io = queues.io;
    }

    @AfterEach
    void stop() {
        if (queues != null) {
            queues.close();
        }
    }

    @Test
    void theCommandsOfOneReadShareOneClockReadingAndAreEachRecordedOnce() throws Exception {
        ByteBuf batch = Unpooled.buffer();
        for (int i = 0; i < 3; i++) {
            batch.writeBytes(read(i));
        }
        io.writeInbound(batch);
        assertThat(CommandCostBenchmark.drain(io)).as("responses written").isPositive();
        assertThat(readLatencies).as("three reads of one socket read").hasSize(3);
        assertThat(readLatencies.get(0)).isPositive();
        assertThat(readLatencies).as("arrived together, flushed together").containsOnly(readLatencies.get(0));

        Thread.sleep(2); // a later read: its own arrival and flush
        io.writeInbound(Unpooled.wrappedBuffer(read(3)));
        CommandCostBenchmark.drain(io);
        assertThat(readLatencies).as("one more, recorded once").hasSize(4);
        assertThat(readLatencies.get(3)).isPositive();
    }

    @Test
    void aReadWhoseBatchEndsInATerminationIsStillRecordedOnce() {
        ByteBuf batch = Unpooled.buffer();
        batch.writeBytes(read(0));
        // a PDU of an unknown type after it: the connection is terminated in the same read batch
        byte[] bad = PduCodec.encode(TcpPdu.CAPSULE_CMD, 0, NvmeHost.rw(NvmeHost.OPC_READ, 1, 0, NLB).cid(++cid)
            .sgl(Sqe.SGL_TRANSPORT, 0, BYTES).toBytes(), null, false, false);
        bad[TcpPdu.TYPE] = 0x7f;
        batch.writeBytes(bad);
        io.writeInbound(batch);
        CommandCostBenchmark.drain(io);
        queues.closeIo();
        assertThat(readLatencies).as("the read before the bad PDU").hasSize(1);
        assertThat(readLatencies.get(0)).isPositive();
    }

    private byte[] read(int block) {
        return PduCodec.encode(TcpPdu.CAPSULE_CMD, 0, NvmeHost.rw(NvmeHost.OPC_READ, 1, (long) block * NLB, NLB)
            .cid(++cid).sgl(Sqe.SGL_TRANSPORT, 0, BYTES).toBytes(), null, false, false);
    }
}
