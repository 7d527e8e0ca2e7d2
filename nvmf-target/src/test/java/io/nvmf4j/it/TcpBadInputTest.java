package io.nvmf4j.it;

import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Pdu;
import io.nvmf4j.testhost.PduCodec;
import io.nvmf4j.testhost.Sqe;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;
import io.nvmf4j.testhost.TermReq;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Malformed NVMe/TCP framing. Each case checks the exact TermReq (or status) and then that a
 * healthy controller, connected before the bad connection, still writes and reads correctly.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class TcpBadInputTest {
    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final int RAW_CID = TcpHost.RAW_CID_BASE + 1;

    static TestTarget target;
    static NvmeController healthy;
    static final AtomicLong seed = new AtomicLong(100);

    @BeforeAll
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    static void start() throws Exception {
        target = TestTarget.start();
        healthy = target.controller(1, TcpHostOptions.DEFAULT);
    }

    @AfterAll
    static void stop() {
        if (healthy != null) {
            healthy.close();
        }
        if (target != null) {
            target.close();
        }
    }

    @AfterEach
    void healthyControllerStillWorks() {
        assertThat(healthy.admin().keepAlive().ok()).as("healthy admin queue").isTrue();
        TestTarget.assertWriteReadBack(healthy.io(0), 50_000, 8192, seed.incrementAndGet());
    }

    /** Reads the next PDU: a C2HTermReq with this FES (and FEI unless null); then the socket closes. */
    private static void assertTerminated(TcpHost h, int fes, Integer fei) throws Exception {
        Pdu p = h.readPdu(WAIT);
        assertThat(p.type()).as("PDU type of %s", p).isEqualTo(Pdu.C2H_TERM_REQ);
        TermReq t = TermReq.of(p);
        assertThat(t.fes()).as("FES of %s", t).isEqualTo(fes);
        if (fei != null) {
            assertThat(t.fei()).as("FEI of %s", t).isEqualTo(fei.longValue());
        }
        assertThat(h.awaitClosed(WAIT)).as("connection closed by the target").isTrue();
    }

    /** Sends {@code pdu} and returns the completion of the CapsuleResp that must come back. */
    private static Completion sendForResponse(TcpHost q, byte[] pdu) throws IOException {
        q.sendRaw(pdu);
        Pdu resp = q.readPdu(WAIT);
        assertThat(resp.type()).as("PDU type of %s", resp).isEqualTo(Pdu.CAPSULE_RESP);
        return Completion.fromCapsuleResp(resp, null);
    }

    private static Sqe keepAliveSqe() {
        return Sqe.of(NvmeHost.OPC_KEEP_ALIVE).cid(RAW_CID).sgl(Sqe.SGL_TRANSPORT, 0, 0);
    }

    private static byte[] writeSqeInCapsule(int bytes) {
        return NvmeHost.rw(NvmeHost.OPC_WRITE, 1, 0, bytes / 512).cid(RAW_CID).sgl(Sqe.SGL_IN_CAPSULE, 0, bytes).toBytes();
    }

    @Test
    void unknownPduType() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
            h.sendRaw(PduCodec.encode(0x0F, 0, new byte[16], null, false, false));
            assertTerminated(h, TermReq.FES_INVALID_HEADER_FIELD, 0);
        }
    }

    @Test
    void badHlenOnCapsuleCmd() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
            byte[] pdu = h.encodeCapsule(keepAliveSqe(), null);
            pdu[2] = 0x10;
            h.sendRaw(pdu);
            assertTerminated(h, TermReq.FES_INVALID_HEADER_FIELD, 2);
        }
    }

    @Test
    void plenSmallerThanHlen() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
            byte[] pdu = h.encodeCapsule(keepAliveSqe(), null);
            Le.putU32(pdu, 4, 64);
            h.sendRaw(pdu);
            assertTerminated(h, TermReq.FES_INVALID_HEADER_FIELD, 4);
        }
    }

    @Test
    void pdoBelowHlen() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
            byte[] pdu = PduCodec.encode(Pdu.CAPSULE_CMD, 0, writeSqeInCapsule(512), new byte[512], false, false);
            pdu[3] = 40;
            h.sendRaw(pdu);
            assertTerminated(h, TermReq.FES_INVALID_HEADER_FIELD, 3);
        }
    }

    @Test
    void plenBeyondInCapsuleLimit() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
            byte[] pdu = h.encodeCapsule(keepAliveSqe(), null);
            pdu[3] = 72;
            Le.putU32(pdu, 4, 72 + (16 << 20));
            h.sendRaw(pdu);
            assertTerminated(h, TermReq.FES_INVALID_HEADER_FIELD, 4);
        }
    }

    @Test
    void capsuleCmdBeforeIcReq() throws Exception {
        try (TcpHost h = target.rawTcp()) {
            h.sendRaw(h.encodeCapsule(keepAliveSqe(), null));
            assertTerminated(h, TermReq.FES_PDU_SEQUENCE_ERROR, 0);
        }
    }

    @Test
    void secondIcReq() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
            h.sendRaw(TcpHost.icReq(0, false, false));
            assertTerminated(h, TermReq.FES_PDU_SEQUENCE_ERROR, null);
        }
    }

    @Test
    void icReqWithUnsupportedPfv() throws Exception {
        try (TcpHost h = target.rawTcp()) {
            h.sendRaw(TcpHost.icReq(1, false, false));
            assertTerminated(h, TermReq.FES_UNSUPPORTED_PARAMETER, 8);
        }
    }

    @Test
    void headerDigestMismatch() throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DIGESTS)) {
            assertThat(h.icResp().headerDigest()).as("header digest negotiated").isTrue();
            byte[] pdu = h.encodeCapsule(keepAliveSqe(), null);
            pdu[72] ^= (byte) 0xFF;
            h.sendRaw(pdu);
            assertTerminated(h, TermReq.FES_HEADER_DIGEST_ERROR, 0);
        }
    }

    @Test
    void dataDigestMismatchFailsTheCommandOnly() throws Exception {
        try (NvmeController c = target.controller(1, TcpHostOptions.DIGESTS)) {
            NvmeHost io = c.io(0);
            byte[] old = Le.random(4096, 1);
            assertThat(io.write(1, 60_000, old).ok()).isTrue();
            Sqe write = NvmeHost.rw(NvmeHost.OPC_WRITE, 1, 60_000, 8).cid(RAW_CID).sgl(Sqe.SGL_IN_CAPSULE, 0, 4096);
            byte[] pdu = io.queue().encodeCapsule(write, Le.random(4096, 2));
            pdu[pdu.length - 1] ^= (byte) 0xFF;
            Completion cqe = sendForResponse(io.queue(), pdu);
            assertThat(cqe.cid()).isEqualTo(RAW_CID);
            assertStatus(cqe, 0, 0x22, false);
            Completion back = io.read(1, 60_000, 8);
            assertThat(back.ok()).as("queue still usable: %s", back).isTrue();
            assertThat(back.data()).as("old data kept").isEqualTo(old);
            TestTarget.assertWriteReadBack(io, 60_000, 4096, 3);
        }
    }

    /** Sends a 16 KiB write with a transport SGL and returns the R2T it gets. */
    private static Pdu startR2tWrite(TcpHost q) throws IOException {
        Sqe write = NvmeHost.rw(NvmeHost.OPC_WRITE, 1, 61_000, 32).cid(RAW_CID).sgl(Sqe.SGL_TRANSPORT, 0, 16384);
        q.sendRaw(q.encodeCapsule(write, null));
        Pdu r2t = q.readPdu(WAIT);
        assertThat(r2t.type()).as("PDU type of %s", r2t).isEqualTo(Pdu.R2T);
        assertThat(r2t.u16(8)).as("R2T CCCID").isEqualTo(RAW_CID);
        return r2t;
    }

    /** Builds the H2CData a test sends for an R2T: (queue, TTAG, R2TO, R2TL) to PDU bytes. */
    @FunctionalInterface
    private interface H2cData {
        byte[] build(TcpHost q, int ttag, long r2to, int r2tl);
    }

    /** Starts an R2T write, answers the R2T with {@code data}, and expects the C2HTermReq. */
    private static void assertH2cDataTerminates(H2cData data, int fes, Integer fei) throws Exception {
        try (NvmeController c = target.controller(1, TcpHostOptions.DEFAULT)) {
            TcpHost q = c.io(0).queue();
            Pdu r2t = startR2tWrite(q);
            q.sendRaw(data.build(q, r2t.u16(10), r2t.u32(12), (int) r2t.u32(16)));
            assertTerminated(q, fes, fei);
        }
    }

    @Test
    void h2cDataWithWrongTtag() throws Exception {
        assertH2cDataTerminates((q, ttag, r2to, r2tl) -> q.encodeH2cData(RAW_CID, (ttag + 1) & 0xFFFF, r2to,
            new byte[r2tl], true), TermReq.FES_INVALID_HEADER_FIELD, 10);
    }

    /** {@code pdu} with {@code pad} zero bytes inserted between its header and its data, PDO and PLEN moved. */
    private static byte[] padded(byte[] pdu, int hlen, int pad) {
        byte[] out = new byte[pdu.length + pad];
        System.arraycopy(pdu, 0, out, 0, hlen);
        System.arraycopy(pdu, hlen, out, hlen + pad, pdu.length - hlen);
        out[3] = (byte) (hlen + pad);
        Le.putU32(out, 4, out.length);
        return out;
    }

    /** CPDA is 0 (dword alignment): a CapsuleCmd whose PDO is not a multiple of 4 is an invalid PDO. */
    @ParameterizedTest(name = "PDO {0}")
    @ValueSource(ints = {73, 74})
    void capsuleDataNotAlignedToCpda(int pdo) throws Exception {
        try (TcpHost h = target.tcp(TcpHostOptions.DEFAULT)) {
            assertThat(h.icResp().cpda()).as("CPDA in ICResp").isZero();
            byte[] pdu = PduCodec.encode(Pdu.CAPSULE_CMD, 0, writeSqeInCapsule(512), new byte[512], false, false);
            h.sendRaw(padded(pdu, 72, pdo - 72));
            assertTerminated(h, TermReq.FES_INVALID_HEADER_FIELD, 3);
        }
    }

    /** Padding up to an aligned PDO is allowed: the data starts at PDO. */
    @Test
    void capsuleDataAtAnAlignedPdoAfterPadding() throws Exception {
        try (NvmeController c = target.controller(1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            byte[] data = Le.random(512, 7);
            Sqe write = NvmeHost.rw(NvmeHost.OPC_WRITE, 1, 62_000, 1).cid(RAW_CID).sgl(Sqe.SGL_IN_CAPSULE, 0, 512);
            assertStatus(sendForResponse(io.queue(), padded(io.queue().encodeCapsule(write, data), 72, 8)), 0, 0, false);
            assertThat(io.read(1, 62_000, 1).data()).as("data taken from PDO").isEqualTo(data);
        }
    }

    @Test
    void h2cDataNotAlignedToCpda() throws Exception {
        assertH2cDataTerminates((q, ttag, r2to, r2tl) -> padded(q.encodeH2cData(RAW_CID, ttag, r2to, new byte[r2tl], true),
            24, 2), TermReq.FES_INVALID_HEADER_FIELD, 3);
    }

    /**
     * LAST_PDU is set on the H2CData that completes the R2T and on no other: a complete transfer without
     * it, or the flag on a PDU that leaves data outstanding, is an invalid FLAGS field (offset 1).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"completing PDU without LAST_PDU", "LAST_PDU before the end"})
    void h2cDataWithWrongLastPdu(String variant) throws Exception {
        boolean whole = variant.startsWith("completing");
        assertH2cDataTerminates((q, ttag, r2to, r2tl) -> q.encodeH2cData(RAW_CID, ttag, r2to,
            new byte[whole ? r2tl : r2tl / 2], !whole), TermReq.FES_INVALID_HEADER_FIELD, 1);
    }

    @Test
    void h2cDataInTwoPdusWithLastPduOnTheSecond() throws Exception {
        try (NvmeController c = target.controller(1, TcpHostOptions.DEFAULT)) {
            NvmeHost io = c.io(0);
            TcpHost q = io.queue();
            Pdu r2t = startR2tWrite(q);
            int ttag = r2t.u16(10);
            byte[] data = Le.random((int) r2t.u32(16), 8);
            int half = data.length / 2;
            q.sendRaw(q.encodeH2cData(RAW_CID, ttag, 0, java.util.Arrays.copyOfRange(data, 0, half), false));
            byte[] second = q.encodeH2cData(RAW_CID, ttag, half, java.util.Arrays.copyOfRange(data, half, data.length), true);
            assertStatus(sendForResponse(q, second), 0, 0, false);
            assertThat(io.read(1, 61_000, data.length / 512).data()).as("data written").isEqualTo(data);
        }
    }

    /**
     * An I/O queue of SQSIZE 127 holds 128 commands; with 128 writes waiting for their data, a 129th
     * capsule is more than the queue holds: PDU Sequence Error.
     */
    @Test
    void moreCommandsThanTheQueueHolds() throws Exception {
        try (NvmeController c = target.controller(1, TcpHostOptions.DEFAULT)) {
            TcpHost q = c.io(0).queue();
            int entries = NvmeController.IO_SQSIZE + 1;
            for (int i = 0; i < entries; i++) {
                Sqe write = NvmeHost.rw(NvmeHost.OPC_WRITE, 1, i * 8L, 8).cid(RAW_CID + i).sgl(Sqe.SGL_TRANSPORT, 0, 4096);
                q.sendRaw(q.encodeCapsule(write, null));
            }
            for (int i = 0; i < entries; i++) {
                Pdu r2t = q.readPdu(WAIT);
                assertThat(r2t.type()).as("answer %d: %s", i, r2t).isEqualTo(Pdu.R2T);
            }
            Sqe oneMore = NvmeHost.rw(NvmeHost.OPC_WRITE, 1, 0, 8).cid(RAW_CID + entries).sgl(Sqe.SGL_TRANSPORT, 0, 4096);
            q.sendRaw(q.encodeCapsule(oneMore, null));
            assertTerminated(q, TermReq.FES_PDU_SEQUENCE_ERROR, 0);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"beyond the window", "unexpected offset"})
    void h2cDataOutOfRange(String variant) throws Exception {
        boolean beyond = variant.equals("beyond the window");
        assertH2cDataTerminates((q, ttag, r2to, r2tl) -> beyond
                ? q.encodeH2cData(RAW_CID, ttag, r2to, new byte[r2tl + 512], true)
                : q.encodeH2cData(RAW_CID, ttag, r2to + 512, new byte[r2tl - 512], true),
            TermReq.FES_DATA_OUT_OF_RANGE, null);
    }
}
