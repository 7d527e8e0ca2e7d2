package io.nvmf4j.transport.tcp;

import io.nvmf4j.it.TestTarget;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Pdu;
import io.nvmf4j.testhost.Sqe;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * H2CData reaches the target in whatever pieces TCP delivers: a header alone, a few bytes of data, the
 * data digest split, the tail of one PDU with the head of the next. The receive path takes an H2CData's
 * data as it comes, from the decoder's buffer or read by the socket straight into the request's buffer
 * ({@link InPlaceReads}); every piece pattern must land the same bytes, with and without digests.
 */
class H2cDataPiecesTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final int CID = TcpHost.RAW_CID_BASE + 7;
    private static final int BYTES = 128 * 1024;
    private static TestTarget target;

    @BeforeAll
    static void start() throws Exception {
        target = TestTarget.start();
    }

    @AfterAll
    static void stop() {
        if (target != null) {
            target.close();
        }
    }

    /**
     * A 128 KiB write with a transport SGL, its R2T answered with H2CData PDUs of {@code pduBytes} each,
     * the byte stream sent in pieces: {@code pattern} "header" sends each PDU's header alone and its data in
     * 1..40000-byte pieces with pauses (the socket then reads data with nothing buffered: in place);
     * "dribble" sends 1..64-byte pieces for the first KiB of every PDU; "whole" sends everything at once.
     */
    @ParameterizedTest(name = "{0}, digests {1}, H2CData of {2} bytes")
    @CsvSource({"header, false, 131072", "header, true, 131072", "header, false, 32768", "header, true, 32768",
        "dribble, false, 65536", "dribble, true, 65536", "whole, false, 32768", "whole, true, 131072"})
    void writeArrivesInPieces(String pattern, boolean digests, int pduBytes) throws Exception {
        long inPlaceBefore = TcpQueue.IN_PLACE_READS.get();
        try (NvmeController c = target.controller(1, digests ? TcpHostOptions.DIGESTS : TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            TcpHost q = io.queue();
            long slba = 20_000 + pduBytes / 512 + (digests ? 1000 : 0);
            byte[] data = new byte[BYTES];
            new SplittableRandom(pattern.hashCode() * 31L + pduBytes + (digests ? 1 : 0)).nextBytes(data);
            int ttag = startWrite(q, slba);

            SplittableRandom rnd = new SplittableRandom(pduBytes);
            for (int off = 0; off < BYTES; off += pduBytes) {
                int len = Math.min(pduBytes, BYTES - off);
                byte[] pdu = q.encodeH2cData(CID, ttag, off, Arrays.copyOfRange(data, off, off + len), off + len == BYTES);
                int pdo = pdu[3] & 0xFF;
                switch (pattern) {
                    case "header" -> {
                        send(q, pdu, 0, pdo);
                        for (int i = pdo; i < pdu.length; ) {
                            int n = Math.min(pdu.length - i, 1 + rnd.nextInt(40_000));
                            send(q, pdu, i, n);
                            i += n;
                        }
                    }
                    case "dribble" -> {
                        int i = 0;
                        while (i < Math.min(pdu.length, 1024)) {
                            int n = Math.min(pdu.length - i, 1 + rnd.nextInt(64));
                            send(q, pdu, i, n);
                            i += n;
                        }
                        q.sendRaw(Arrays.copyOfRange(pdu, i, pdu.length));
                    }
                    default -> q.sendRaw(pdu);
                }
            }
            Pdu resp = q.readPdu(WAIT);
            assertThat(resp.type()).as("PDU type of %s", resp).isEqualTo(Pdu.CAPSULE_RESP);
            Completion cqe = Completion.fromCapsuleResp(resp, null);
            assertThat(cqe.cid()).isEqualTo(CID);
            assertThat(cqe.ok()).as("write completion %s", cqe).isTrue();

            Completion back = io.read(1, slba, BYTES / TestTarget.BLOCK_SIZE);
            assertThat(back.ok()).as("read back %s", back).isTrue();
            assertThat(back.data()).as("the bytes written").isEqualTo(data);
            // and the queue goes on with ordinary I/O
            TestTarget.assertWriteReadBack(io, slba, 8192, pduBytes);
        }
        if (pattern.equals("header")) {
            assertThat(TcpQueue.IN_PLACE_READS.get()).as("socket reads straight into the request's buffer")
                .isGreaterThan(inPlaceBefore);
        }
    }

    /**
     * A 128 KiB write's H2CData sent whole, as hosts send it: the socket reads its header alone (a write of 64 KiB
     * or more awaits its data, nothing is buffered) and then the data in place, none of it through a receive
     * buffer. And a capsule that comes while such a write waits (a 4 KiB write with its data in the capsule):
     * the header-sized read takes its first bytes, the rest is read on, and both writes land their bytes.
     */
    @ParameterizedTest(name = "digests {0}")
    @CsvSource({"false", "true"})
    void largeWriteDataIsReadInPlaceAfterItsHeaderAlone(boolean digests) throws Exception {
        long headersBefore = TcpQueue.HEADER_READS.get();
        long inPlaceBefore = TcpQueue.IN_PLACE_READS.get();
        try (NvmeController c = target.controller(1, digests ? TcpHostOptions.DIGESTS : TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            TcpHost q = io.queue();
            long slba = 60_000 + (digests ? 1000 : 0);
            byte[] data = new byte[BYTES];
            new SplittableRandom(digests ? 11 : 12).nextBytes(data);
            int ttag = startWrite(q, slba);

            // a capsule while the large write waits for its data
            byte[] small = new byte[4096];
            new SplittableRandom(digests ? 13 : 14).nextBytes(small);
            long smallLba = slba + BYTES / TestTarget.BLOCK_SIZE;
            Sqe smallWrite = NvmeHost.rw(NvmeHost.OPC_WRITE, 1, smallLba, small.length / TestTarget.BLOCK_SIZE)
                .cid(CID + 1).sgl(Sqe.SGL_IN_CAPSULE, 0, small.length);
            q.sendRaw(q.encodeCapsule(smallWrite, small));
            Pdu smallResp = q.readPdu(WAIT);
            assertThat(smallResp.type()).as("PDU type of %s", smallResp).isEqualTo(Pdu.CAPSULE_RESP);
            Completion smallCqe = Completion.fromCapsuleResp(smallResp, null);
            assertThat(smallCqe.cid()).isEqualTo(CID + 1);
            assertThat(smallCqe.ok()).as("in-capsule write completion %s", smallCqe).isTrue();
            long headersAfterCapsule = TcpQueue.HEADER_READS.get();
            assertThat(headersAfterCapsule).as("the capsule's start read as if it were an H2CData header")
                .isGreaterThan(headersBefore);

            q.sendRaw(q.encodeH2cData(CID, ttag, 0, data, true));
            Pdu resp = q.readPdu(WAIT);
            assertThat(resp.type()).as("PDU type of %s", resp).isEqualTo(Pdu.CAPSULE_RESP);
            Completion cqe = Completion.fromCapsuleResp(resp, null);
            assertThat(cqe.cid()).isEqualTo(CID);
            assertThat(cqe.ok()).as("write completion %s", cqe).isTrue();
            assertThat(TcpQueue.HEADER_READS.get()).as("the H2CData header read alone")
                .isGreaterThan(headersAfterCapsule);
            assertThat(TcpQueue.IN_PLACE_READS.get()).as("its data read straight into the request's buffer")
                .isGreaterThan(inPlaceBefore);

            assertThat(io.read(1, slba, BYTES / TestTarget.BLOCK_SIZE).data()).as("the large write's bytes")
                .isEqualTo(data);
            assertThat(io.read(1, smallLba, small.length / TestTarget.BLOCK_SIZE).data()).as("the small write's bytes")
                .isEqualTo(small);
            TestTarget.assertWriteReadBack(io, slba + 2000, 8192, 3);
        }
    }

    /**
     * Command capsules with 4 KiB of in-capsule data each, sent as one byte stream cut in random places: a
     * socket read that ends inside a capsule leaves its start in the decoder, and the next receive buffer
     * begins with those bytes ({@link TcpPduReader#carryTarget}) so the socket appends the rest. Every write
     * must land its own bytes, with and without digests, and the cut-off path must have been taken.
     */
    @ParameterizedTest(name = "digests {0}, pieces up to {1} bytes")
    @CsvSource({"false, 9000, 40000", "true, 9000, 42000", "false, 300, 44000", "true, 70000, 46000"})
    void capsulesCutAcrossReads(boolean digests, int maxPiece, long slba) throws Exception {
        long carriedBefore = TcpQueue.CARRIED_READS.get();
        int commands = 24;
        int bytes = 4096;
        try (NvmeController c = target.controller(1, digests ? TcpHostOptions.DIGESTS : TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            TcpHost q = io.queue();
            SplittableRandom rnd = new SplittableRandom(maxPiece * 7L + (digests ? 1 : 0));
            byte[][] data = new byte[commands][bytes];
            ByteArrayOutputStream stream = new ByteArrayOutputStream();
            for (int i = 0; i < commands; i++) {
                rnd.nextBytes(data[i]);
                Sqe write = NvmeHost.rw(NvmeHost.OPC_WRITE, 1, slba + (long) i * bytes / TestTarget.BLOCK_SIZE,
                    bytes / TestTarget.BLOCK_SIZE).cid(CID + i).sgl(Sqe.SGL_IN_CAPSULE, 0, bytes);
                stream.writeBytes(q.encodeCapsule(write, data[i]));
            }
            byte[] all = stream.toByteArray();
            for (int i = 0; i < all.length; ) {
                int n = Math.min(all.length - i, 1 + rnd.nextInt(maxPiece));
                send(q, all, i, n);
                i += n;
            }
            boolean[] answered = new boolean[commands];
            for (int i = 0; i < commands; i++) {
                Pdu resp = q.readPdu(WAIT);
                assertThat(resp.type()).as("PDU type of %s", resp).isEqualTo(Pdu.CAPSULE_RESP);
                Completion cqe = Completion.fromCapsuleResp(resp, null);
                assertThat(cqe.ok()).as("write completion %s", cqe).isTrue();
                assertThat(cqe.cid() - CID).as("cid of %s", cqe).isBetween(0, commands - 1);
                answered[cqe.cid() - CID] = true;
            }
            assertThat(answered).as("every write answered once").containsOnly(true);
            for (int i = 0; i < commands; i++) {
                Completion back = io.read(1, slba + (long) i * bytes / TestTarget.BLOCK_SIZE, bytes / TestTarget.BLOCK_SIZE);
                assertThat(back.ok()).as("read back %s", back).isTrue();
                assertThat(back.data()).as("the bytes of write %d", i).isEqualTo(data[i]);
            }
            TestTarget.assertWriteReadBack(io, slba + 1000, 8192, maxPiece);
        }
        assertThat(TcpQueue.CARRIED_READS.get()).as("reads appended to the cut-off start of a capsule")
            .isGreaterThan(carriedBefore);
    }

    /** Sends a {@link #BYTES} write (cid {@link #CID}) with a transport SGL; returns the TTAG of its R2T. */
    private static int startWrite(TcpHost q, long slba) throws Exception {
        Sqe write = NvmeHost.rw(NvmeHost.OPC_WRITE, 1, slba, BYTES / TestTarget.BLOCK_SIZE).cid(CID)
            .sgl(Sqe.SGL_TRANSPORT, 0, BYTES);
        q.sendRaw(q.encodeCapsule(write, null));
        Pdu r2t = q.readPdu(WAIT);
        assertThat(r2t.type()).as("PDU type of %s", r2t).isEqualTo(Pdu.R2T);
        assertThat(r2t.u32(16)).as("R2TL").isEqualTo(BYTES);
        return r2t.u16(10);
    }

    /** Sends bytes [from, from + n) of {@code pdu} and pauses, so the target reads them on their own. */
    private static void send(TcpHost q, byte[] pdu, int from, int n) throws Exception {
        q.sendRaw(Arrays.copyOfRange(pdu, from, from + n));
        Thread.sleep(2);
    }
}
