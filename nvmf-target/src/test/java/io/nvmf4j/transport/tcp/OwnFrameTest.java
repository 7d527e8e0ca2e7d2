package io.nvmf4j.transport.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.PduCodec;
import io.nvmf4j.testhost.Sqe;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A read of up to {@link TcpQueue#OWN_FRAME_DATA} bytes is answered from its request slot's own buffer, kept
 * from one command to the next: no pool allocation per read, never written into while the channel still holds it
 * (a response the socket took but a handler in front has not let go of), released when the connection closes.
 * An {@link EmbeddedChannel} stands in for the socket: it keeps what is written until the test reads it, and its
 * allocator counts and keeps every buffer handed out.
 */
class OwnFrameTest {
    private static final int BYTES = 4096;
    private static final int NLB = BYTES / TestTarget.BLOCK_SIZE;

    private CountingAllocator alloc;
    private EmbeddedQueues queues;
    private EmbeddedChannel io;
    private int cid;

    @BeforeEach
    void start() throws Exception {
        alloc = new CountingAllocator(BYTES);
        queues = EmbeddedQueues.start(alloc, IoObserver.NONE);
        io = queues.io;
        for (int i = 0; i < 4; i++) { // block i holds the byte i + 1 throughout
            io.writeInbound(Unpooled.wrappedBuffer(PduCodec.encode(TcpPdu.CAPSULE_CMD, 0,
                NvmeHost.rw(NvmeHost.OPC_WRITE, 1, (long) i * NLB, NLB).cid(++cid)
                    .sgl(Sqe.SGL_IN_CAPSULE, 0, BYTES).toBytes(), filled(i + 1), false, false)));
        }
        assertThat(CommandCostBenchmark.drain(io)).isEqualTo(4);
    }

    @AfterEach
    void stop() {
        if (queues != null) {
            queues.close();
        }
    }

    @Test
    void readsOneAfterAnotherReuseTheSlotsBuffer() {
        int before = alloc.large();
        for (int i = 0; i < 200; i++) {
            sendRead(i % 4);
            List<ByteBuf> out = outbound();
            try {
                assertThat(out).hasSize(1);
                assertThat(fill(readData(out.get(0)))).as("read %d", i).isEqualTo(i % 4 + 1);
            } finally {
                out.forEach(ReferenceCountUtil::release);
            }
        }
        assertThat(alloc.large() - before).as("buffers of 4 KiB or more allocated for 200 reads").isEqualTo(1);
    }

    @Test
    void aBufferTheChannelStillHoldsIsNeverWrittenInto() {
        // the first read's response stays in the channel's hands (not read out), so its slot is free again but its
        // buffer is not: the next read, which takes the same slot, must answer from another buffer
        sendRead(0);
        sendRead(1);
        sendRead(2);
        List<ByteBuf> out = outbound();
        try {
            assertThat(out).hasSize(3);
            assertThat(fill(readData(out.get(0)))).as("first read").isEqualTo(1);
            assertThat(fill(readData(out.get(1)))).as("second read").isEqualTo(2);
            assertThat(fill(readData(out.get(2)))).as("third read").isEqualTo(3);
        } finally {
            out.forEach(ReferenceCountUtil::release);
        }
        // once the channel let go, the slot's own buffer serves again
        int before = alloc.large();
        for (int i = 0; i < 20; i++) {
            sendRead(3);
            outbound().forEach(ReferenceCountUtil::release);
        }
        assertThat(alloc.large() - before).as("buffers allocated for 20 reads after the channel let go").isZero();
    }

    /**
     * Up to 128 KiB (the default MDTS) a read answers from the slot's own buffer too; a slot whose buffer is too small
     * for a longer read (a 4 KiB read first) lets it go for a larger one, and closing releases that one.
     */
    @Test
    void readsOf128KiBReuseTheSlotsBufferToo() {
        assertThat(TcpQueue.OWN_FRAME_DATA).isGreaterThanOrEqualTo(128 * 1024);
        int big = 128 * 1024;
        sendRead(0); // the slot's buffer sized for 4 KiB
        outbound().forEach(ReferenceCountUtil::release);
        int before = alloc.large();
        for (int i = 0; i < 50; i++) {
            sendRead(0, big);
            List<ByteBuf> out = outbound();
            try {
                assertThat(out).hasSize(1);
                byte[] data = readData(out.get(0));
                assertThat(data).hasSize(big);
                for (int b = 0; b < big / BYTES; b++) { // blocks 0-3 hold 1-4, the rest was never written
                    byte[] block = Arrays.copyOfRange(data, b * BYTES, (b + 1) * BYTES);
                    assertThat(block).as("read %d, 4 KiB block %d", i, b).isEqualTo(b < 4 ? filled(b + 1) : new byte[BYTES]);
                }
            } finally {
                out.forEach(ReferenceCountUtil::release);
            }
        }
        assertThat(alloc.large() - before).as("buffers of 4 KiB or more allocated for 50 reads of 128 KiB").isEqualTo(1);
        queues.closeIo();
        assertThat(alloc.leaked()).as("buffers of the queue still referenced after it closed").isEmpty();
    }

    @Test
    void closingReleasesEveryBuffer() {
        for (int i = 0; i < 8; i++) {
            sendRead(i % 4); // a few slots get their own buffer: the responses are read out together
        }
        outbound().forEach(ReferenceCountUtil::release);
        queues.closeIo();
        assertThat(alloc.leaked()).as("buffers of the queue still referenced after it closed").isEmpty();
    }

    private void sendRead(int block) {
        sendRead(block, BYTES);
    }

    private void sendRead(int block, int bytes) {
        io.writeInbound(Unpooled.wrappedBuffer(PduCodec.encode(TcpPdu.CAPSULE_CMD, 0,
            NvmeHost.rw(NvmeHost.OPC_READ, 1, (long) block * NLB, bytes / TestTarget.BLOCK_SIZE).cid(++cid & 0x7fff)
                .sgl(Sqe.SGL_TRANSPORT, 0, bytes).toBytes(), null, false, false)));
    }

    private List<ByteBuf> outbound() {
        List<ByteBuf> out = new ArrayList<>();
        for (Object o = io.readOutbound(); o != null; o = io.readOutbound()) {
            out.add((ByteBuf) o);
        }
        return out;
    }

    /** The data of the C2HData PDU a read's response starts with. */
    private static byte[] readData(ByteBuf b) {
        int at = b.readerIndex();
        assertThat((int) b.getUnsignedByte(at + TcpPdu.TYPE)).isEqualTo(TcpPdu.C2H_DATA);
        int pdo = b.getUnsignedByte(at + TcpPdu.PDO);
        int datal = b.getIntLE(at + TcpPdu.CH_SIZE + 8);
        byte[] data = new byte[datal];
        b.getBytes(at + pdo, data);
        return data;
    }

    /** The byte every position of {@code data} holds, or -1 when they differ (or for a length other than 4 KiB). */
    private static int fill(byte[] data) {
        for (byte b : data) {
            if (b != data[0]) {
                return -1;
            }
        }
        return data.length == BYTES ? data[0] : -1;
    }

    private static byte[] filled(int value) {
        byte[] b = new byte[BYTES];
        Arrays.fill(b, (byte) value);
        return b;
    }
}
